//===- Report.cpp - kiln-compile --report: memory plan, kernels, phases ---===//
//
// Builds the compile report of one artifact and writes it as HTML and JSON.
//
//   1. collectCompileReport: the buffers come from analyzeBufferLiveness (the
//      liveness kiln-plan-memory placed them by) and the kernels'
//      `arena_offsets`; the launches from the driver's launch list, whose
//      LaunchMetadata (compiler/artifact/LaunchMetadata.h) gives names, ops,
//      ONNX nodes, FLOPs and bytes. Per launch index the live bytes and the
//      top of the live buffers are computed; the first launch whose top is
//      the arena size is the peak.
//   2. compileReportToJson: llvm::json.
//   3. printCompileReportHtml: one page, inline CSS and SVG, a few lines of
//      inline script that sort the kernel table by a clicked column.
//
//===----------------------------------------------------------------------===//

#include "compiler/report/Report.h"

#include "passes/Passes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
using namespace kiln;

namespace {

std::string typeString(Type type) {
  std::string s;
  llvm::raw_string_ostream(s) << type;
  return s;
}

/// "12,345,678".
std::string withCommas(uint64_t v) {
  std::string digits = std::to_string(v), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return out;
}

/// 1536 -> "1.5 KiB"; below 1 KiB "123 B".
std::string humanBytes(double bytes) {
  static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  return u == 0 ? llvm::formatv("{0} B", static_cast<uint64_t>(bytes)).str()
                : llvm::formatv("{0:f1} {1}", bytes, units[u]).str();
}

/// 2.5e9 -> "2.50 GFLOP".
std::string humanFlops(double flops) {
  static const char *units[] = {"", "k", "M", "G", "T", "P"};
  int u = 0;
  while (flops >= 1000 && u < 5) {
    flops /= 1000;
    ++u;
  }
  return u == 0 ? llvm::formatv("{0} FLOP", static_cast<uint64_t>(flops)).str()
                : llvm::formatv("{0:f2} {1}FLOP", flops, units[u]).str();
}

/// HTML-escaped text (& < > " ').
std::string esc(llvm::StringRef s) {
  std::string out;
  llvm::raw_string_ostream os(out);
  llvm::printHTMLEscaped(s, os);
  return out;
}

/// A stable colour per layer (the same layer gets the same hue on every page).
std::string layerColour(llvm::StringRef layer) {
  if (layer.empty())
    return "hsl(210,8%,70%)";
  unsigned hue = static_cast<unsigned>(llvm::xxh3_64bits(layer) % 360);
  return llvm::formatv("hsl({0},55%,62%)", hue).str();
}

int64_t toJsonInt(uint64_t v) {
  return static_cast<int64_t>(std::min<uint64_t>(v, uint64_t(INT64_MAX)));
}

llvm::json::Array stringArray(llvm::ArrayRef<std::string> strings) {
  llvm::json::Array a;
  for (const std::string &s : strings)
    a.push_back(s);
  return a;
}

llvm::json::Array dim3(const std::array<unsigned, 3> &d) {
  return llvm::json::Array{d[0], d[1], d[2]};
}

std::string dim3String(const std::array<unsigned, 3> &d) {
  return llvm::formatv("{0}&times;{1}&times;{2}", d[0], d[1], d[2]).str();
}

} // namespace

llvm::Expected<CompileReport> kiln::collectCompileReport(func::FuncOp func,
                                                         llvm::ArrayRef<ArtifactLaunch> launches,
                                                         llvm::ArrayRef<ArtifactCollective> collectives) {
  CompileReport report;
  auto arena = func->getAttrOfType<IntegerAttr>("kiln.arena_bytes");
  auto alignment = func->getAttrOfType<IntegerAttr>("kiln.arena_alignment");
  if (!arena || !alignment)
    return llvm::createStringError("internal error: the report needs a function planned by "
                                   "kiln-plan-memory (kiln.arena_bytes, kiln.arena_alignment)");
  report.arenaBytes = arena.getInt();
  report.alignment = alignment.getInt();

  // Launches: one per kiln.kernel, in program order (the driver's order).
  SmallVector<KernelOp> kernels(func.getBody().front().getOps<KernelOp>());
  if (kernels.size() != launches.size())
    return llvm::createStringError("internal error: the report found %zu kernels for %zu launches",
                                   kernels.size(), launches.size());
  for (auto [kernel, launch] : llvm::zip(kernels, launches)) {
    ReportLaunch l;
    l.kernel = kernel.getSymName().str();
    l.function = launch.function;
    l.grid = launch.grid;
    l.block = launch.block;
    l.sharedMemBytes = launch.sharedMemBytes;
    l.metadata = launch.metadata;
    report.launches.push_back(std::move(l));
  }
  for (const ArtifactCollective &c : collectives)
    report.allReducesBefore.push_back(c.beforeLaunch);

  // Graph outputs: which buffer each returned value lives in.
  llvm::DenseMap<Value, std::string> outputName;
  if (auto ret = dyn_cast<func::ReturnOp>(func.getBody().front().getTerminator()))
    for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
      auto name = func.getResultAttrOfType<StringAttr>(i, "kiln.name");
      std::string &slot = outputName[viewSource(v)];
      std::string text = name ? name.str() : "output " + std::to_string(i);
      slot = slot.empty() ? text : slot + ", " + text;
    }

  // Buffers: the planner's own liveness, offsets from the kernels.
  FailureOr<SmallVector<BufferLiveness>> liveness = analyzeBufferLiveness(func, report.alignment);
  if (failed(liveness))
    return llvm::createStringError("internal error: the report cannot analyze the memory plan");
  const int64_t lastLaunch = static_cast<int64_t>(launches.size()) - 1;
  for (BufferLiveness &b : *liveness) {
    std::optional<ArrayRef<int64_t>> offsets = b.kernel.getArenaOffsets();
    if (!offsets || b.resultIndex >= offsets->size())
      return llvm::createStringError("internal error: kernel @%s has no arena offsets",
                                     b.kernel.getSymName().str().c_str());
    ReportBuffer buf;
    buf.kernel = b.kernel.getSymName().str();
    buf.result = b.resultIndex;
    Value result = b.kernel.getResult(b.resultIndex);
    buf.type = typeString(result.getType());
    buf.bytes = b.bytes;
    buf.arenaBytes = b.arenaBytes;
    buf.offset = (*offsets)[b.resultIndex];
    buf.firstLaunch = b.firstUse;
    buf.liveToEnd = b.lastUse == kLiveToEnd;
    buf.lastLaunch = buf.liveToEnd ? lastLaunch : b.lastUse;
    if (auto it = outputName.find(result); it != outputName.end())
      buf.output = it->second;
    // The ONNX node of the op the kernel yields for this result; through
    // reshapes, which only rename the layout of what the op before computed.
    Value yielded = b.kernel.getYield()->getOperand(b.resultIndex);
    while (auto view = yielded.getDefiningOp<ReshapeOp>())
      yielded = view.getInput();
    SmallVector<OnnxNodeRef> nodes;
    if (Operation *def = yielded.getDefiningOp())
      collectOnnxNodes(def->getLoc(), nodes);
    buf.name = nodes.empty() ? "@" + buf.kernel
                             : nodes.front().node + " (" + nodes.front().opType + ")";
    report.intermediateBytes += buf.arenaBytes;
    if (buf.offset < 0 || buf.offset + buf.arenaBytes > report.arenaBytes)
      return llvm::createStringError(
          "internal error: buffer %s#%u at [%lld, %lld) lies outside the %lld-byte arena",
          buf.kernel.c_str(), buf.result, static_cast<long long>(buf.offset),
          static_cast<long long>(buf.offset + buf.arenaBytes),
          static_cast<long long>(report.arenaBytes));
    report.buffers.push_back(std::move(buf));
  }

  // Per launch: bytes live and the top of the live buffers.
  for (int64_t t = 0; t <= lastLaunch; ++t) {
    int64_t live = 0, top = 0;
    for (const ReportBuffer &b : report.buffers)
      if (b.firstLaunch <= t && t <= b.lastLaunch) {
        live += b.arenaBytes;
        top = std::max(top, b.offset + b.arenaBytes);
      }
    if (live > report.maxLiveBytes) {
      report.maxLiveBytes = live;
      report.maxLiveLaunch = t;
    }
    if (report.peakLaunch < 0 && top == report.arenaBytes && top > 0)
      report.peakLaunch = t;
  }
  if (!report.buffers.empty() && report.peakLaunch < 0)
    return llvm::createStringError(
        "internal error: no launch reaches the planned arena of %lld bytes",
        static_cast<long long>(report.arenaBytes));
  return report;
}

llvm::json::Value kiln::compileReportToJson(const CompileReport &r) {
  llvm::json::Array buffers;
  for (const ReportBuffer &b : r.buffers)
    buffers.push_back(llvm::json::Object{
        {"name", b.name},
        {"kernel", b.kernel},
        {"result", b.result},
        {"type", b.type},
        {"output", b.output},
        {"bytes", b.bytes},
        {"arena_bytes", b.arenaBytes},
        {"offset", b.offset},
        {"first_launch", b.firstLaunch},
        {"last_launch", b.lastLaunch},
        {"live_to_end", b.liveToEnd},
    });
  llvm::json::Array launches;
  for (auto [i, l] : llvm::enumerate(r.launches))
    launches.push_back(llvm::json::Object{
        {"index", static_cast<int64_t>(i)},
        {"kernel", l.kernel},
        {"function", l.function},
        {"name", l.metadata.name},
        {"layer", l.metadata.layer},
        {"ops", stringArray(l.metadata.ops)},
        {"onnx_nodes", stringArray(l.metadata.nodes)},
        {"onnx_node_count", l.metadata.nodeCount},
        {"grid", dim3(l.grid)},
        {"block", dim3(l.block)},
        {"shared_mem_bytes", l.sharedMemBytes},
        {"bytes_read", toJsonInt(l.metadata.cost.bytesRead)},
        {"bytes_written", toJsonInt(l.metadata.cost.bytesWritten)},
        {"flops", toJsonInt(l.metadata.cost.flops)},
    });
  llvm::json::Array allReduces;
  for (unsigned before : r.allReducesBefore)
    allReduces.push_back(before);
  llvm::json::Array phases;
  for (const ReportPhase &p : r.phases)
    phases.push_back(llvm::json::Object{{"name", p.name}, {"ms", p.ms}});
  return llvm::json::Object{
      {"format", "kiln-compile-report"},
      {"version", 1},
      {"model", r.model},
      {"shapes", r.shapes},
      {"precision", r.precision},
      {"targets", stringArray(r.targets)},
      {"artifact", r.artifact},
      {"rank", r.rank},
      {"world_size", r.worldSize},
      {"arena",
       llvm::json::Object{
           {"bytes", r.arenaBytes},
           {"intermediate_bytes", r.intermediateBytes},
           {"alignment", r.alignment},
           {"peak_launch", r.peakLaunch},
           {"max_live_bytes", r.maxLiveBytes},
           {"max_live_launch", r.maxLiveLaunch},
       }},
      {"buffers", std::move(buffers)},
      {"launches", std::move(launches)},
      {"all_reduces_before", std::move(allReduces)},
      {"phases", std::move(phases)},
      {"total_ms", r.totalMs},
  };
}

//===----------------------------------------------------------------------===//
// HTML
//===----------------------------------------------------------------------===//

namespace {

constexpr const char *kStyle = R"css(
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #1d232a; }
h1 { font-size: 22px; margin: 0 0 8px; } h2 { font-size: 18px; margin: 28px 0 8px; }
table { border-collapse: collapse; }
table.sortable { font-size: 13px; }
th, td { padding: 3px 8px; border-bottom: 1px solid #e2e5e9; text-align: left; vertical-align: top; }
th { background: #f3f5f7; position: sticky; top: 0; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.facts th { position: static; width: 14em; }
table.sortable th { cursor: pointer; user-select: none; }
tr.total td { font-weight: 600; border-top: 2px solid #aab2bb; }
code, .mono { font-family: ui-monospace, monospace; font-size: 12px; }
.muted { color: #68727d; }
.bar { background: #5b8def; height: 10px; }
svg { max-width: 100%; height: auto; background: #fbfcfd; border: 1px solid #e2e5e9; }
svg text { font: 11px system-ui, sans-serif; fill: #1d232a; }
svg rect.buffer { stroke: #ffffff; stroke-width: 0.5; }
svg rect.buffer.output { stroke: #1d232a; stroke-width: 1; }
svg rect.buffer:hover { fill: #f5b342; }
svg .axis { stroke: #1d232a; stroke-width: 1; }
svg .grid { stroke: #e2e5e9; stroke-width: 1; }
svg .peak { stroke: #d62728; stroke-width: 1.5; stroke-dasharray: 6 3; }
svg text.peak { fill: #d62728; stroke: none; font-weight: 600; }
svg .live { stroke: #1d232a; stroke-width: 1.5; fill: none; }
svg .allreduce { stroke: #8e44ad; stroke-width: 1.5; stroke-dasharray: 2 2; }
)css";

/// Sorts a table.sortable by the clicked column: numbers by data-v, text otherwise.
constexpr const char *kScript = R"js(
document.querySelectorAll('table.sortable').forEach(function (table) {
  table.querySelectorAll('th').forEach(function (th, col) {
    th.addEventListener('click', function () {
      var body = table.tBodies[0], asc = th.dataset.dir !== 'asc';
      th.dataset.dir = asc ? 'asc' : 'desc';
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = a.cells[col], y = b.cells[col];
        var vx = x.dataset.v !== undefined ? parseFloat(x.dataset.v) : x.textContent;
        var vy = y.dataset.v !== undefined ? parseFloat(y.dataset.v) : y.textContent;
        var c = vx < vy ? -1 : vx > vy ? 1 : 0;
        return asc ? c : -c;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});
)js";

/// The distinct ops in first-seen order with their counts: "matmul, reshape x3".
std::string opCounts(llvm::ArrayRef<std::string> ops) {
  llvm::SmallVector<std::pair<std::string, unsigned>> counts;
  for (const std::string &op : ops) {
    auto it = llvm::find_if(counts, [&](const auto &c) { return c.first == op; });
    if (it == counts.end())
      counts.push_back({op, 1});
    else
      ++it->second;
  }
  std::string out;
  for (const auto &[op, n] : counts) {
    if (!out.empty())
      out += ", ";
    out += n > 1 ? op + " x" + std::to_string(n) : op;
  }
  return out;
}

/// A number cell with its raw value for sorting.
void numCell(llvm::raw_ostream &os, double value, llvm::StringRef text) {
  os << "<td class=\"num\" data-v=\"" << llvm::formatv("{0}", value) << "\">" << text << "</td>";
}

/// The memory-plan picture: x = launch index, y = arena offset (0 at the
/// bottom); one rect per buffer spanning [firstLaunch, lastLaunch + 1), the
/// live bytes per launch as a step line, the arena top (peak) as a dashed
/// line with a marker at the first launch that reaches it, all-reduces as
/// dotted verticals.
void printMemorySvg(const CompileReport &r, llvm::raw_ostream &os) {
  const double left = 90, right = 24, top = 44, bottom = 52, plotW = 1000, plotH = 420;
  const double width = left + plotW + right, height = top + plotH + bottom;
  const int64_t numLaunches = std::max<int64_t>(1, r.launches.size());
  const double arena = std::max<int64_t>(1, r.arenaBytes);
  auto x = [&](double t) { return left + t * plotW / numLaunches; };
  auto y = [&](double offset) { return top + plotH - offset * plotH / arena; };
  auto f = [](double v) { return llvm::formatv("{0:f2}", v).str(); };

  os << "<svg id=\"memory-plan\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" << f(width)
     << "\" height=\"" << f(height) << "\" viewBox=\"0 0 " << f(width) << " " << f(height)
     << "\" role=\"img\" aria-label=\"memory plan\">\n";
  // Grid and y ticks (quarters of the arena).
  for (int q = 0; q <= 4; ++q) {
    double v = arena * q / 4, yy = y(v);
    os << "<line class=\"grid\" x1=\"" << f(left) << "\" y1=\"" << f(yy) << "\" x2=\""
       << f(left + plotW) << "\" y2=\"" << f(yy) << "\"/>"
       << "<text x=\"" << f(left - 6) << "\" y=\"" << f(yy + 4) << "\" text-anchor=\"end\">"
       << esc(humanBytes(q == 4 ? r.arenaBytes : v)) << "</text>\n";
  }
  // x ticks: every launch up to 40, else about 20 labels.
  int64_t step = numLaunches <= 40 ? 1 : (numLaunches + 19) / 20;
  for (int64_t t = 0; t < numLaunches; t += step)
    os << "<text x=\"" << f(x(t + 0.5)) << "\" y=\"" << f(top + plotH + 16)
       << "\" text-anchor=\"middle\">" << t << "</text>\n";
  os << "<text x=\"" << f(left + plotW / 2) << "\" y=\"" << f(height - 10)
     << "\" text-anchor=\"middle\">launch index (time)</text>\n";
  os << "<text transform=\"translate(16," << f(top + plotH / 2)
     << ") rotate(-90)\" text-anchor=\"middle\">arena offset</text>\n";

  // Buffers.
  for (auto [i, b] : llvm::enumerate(r.buffers)) {
    std::string layer;
    if (b.firstLaunch >= 0 && b.firstLaunch < static_cast<int64_t>(r.launches.size()))
      layer = r.launches[b.firstLaunch].metadata.layer;
    double x0 = x(b.firstLaunch), x1 = x(b.lastLaunch + 1);
    double h = std::max(0.5, b.arenaBytes * plotH / arena);
    os << "<rect class=\"buffer" << (b.liveToEnd ? " output" : "") << "\" x=\"" << f(x0)
       << "\" y=\"" << f(y(b.offset + b.arenaBytes)) << "\" width=\"" << f(std::max(1.0, x1 - x0))
       << "\" height=\"" << f(h) << "\" fill=\"" << layerColour(layer) << "\"><title>"
       << "buffer " << i << ": " << esc(b.name) << "&#10;"
       << esc(b.type) << ", " << withCommas(b.bytes) << " bytes ("
       << withCommas(b.arenaBytes) << " in the arena) at offset " << withCommas(b.offset)
       << "&#10;written by launch " << b.firstLaunch << " (@" << esc(b.kernel) << " result "
       << b.result << "), live to launch " << b.lastLaunch
       << (b.liveToEnd ? " and after: graph output '" + esc(b.output) + "'" : std::string())
       << "</title></rect>\n";
  }

  // Bytes live per launch.
  if (!r.launches.empty()) {
    os << "<polyline class=\"live\" points=\"";
    for (int64_t t = 0; t < numLaunches; ++t) {
      int64_t live = 0;
      for (const ReportBuffer &b : r.buffers)
        if (b.firstLaunch <= t && t <= b.lastLaunch)
          live += b.arenaBytes;
      os << f(x(t)) << "," << f(y(live)) << " " << f(x(t + 1)) << "," << f(y(live)) << " ";
    }
    os << "\"><title>bytes live per launch (largest: " << withCommas(r.maxLiveBytes)
       << " at launch " << r.maxLiveLaunch << ")</title></polyline>\n";
  }

  // All-reduces (tensor-parallel ranks).
  for (unsigned before : r.allReducesBefore)
    os << "<line class=\"allreduce\" x1=\"" << f(x(before)) << "\" y1=\"" << f(top) << "\" x2=\""
       << f(x(before)) << "\" y2=\"" << f(top + plotH) << "\"><title>all-reduce before launch "
       << before << "</title></line>\n";

  // The peak: the arena's top and the first launch reaching it.
  os << "<line class=\"peak\" x1=\"" << f(left) << "\" y1=\"" << f(y(arena)) << "\" x2=\""
     << f(left + plotW) << "\" y2=\"" << f(y(arena)) << "\"/>\n";
  if (r.peakLaunch >= 0) {
    double px = x(r.peakLaunch + 0.5);
    os << "<line id=\"peak-launch\" class=\"peak\" x1=\"" << f(px) << "\" y1=\"" << f(top - 6)
       << "\" x2=\"" << f(px) << "\" y2=\"" << f(top + plotH) << "\"/>\n";
    std::string what = r.peakLaunch < static_cast<int64_t>(r.launches.size())
                           ? r.launches[r.peakLaunch].metadata.name
                           : std::string();
    bool leftSide = r.peakLaunch * 2 < numLaunches;
    os << "<text class=\"peak\" x=\"" << f(leftSide ? px + 6 : px - 6) << "\" y=\""
       << f(top - 12) << "\" text-anchor=\"" << (leftSide ? "start" : "end") << "\">peak "
       << withCommas(r.arenaBytes) << " bytes (" << esc(humanBytes(r.arenaBytes))
       << ") at launch " << r.peakLaunch << (what.empty() ? "" : ": ") << esc(what)
       << "</text>\n";
  }
  os << "<line class=\"axis\" x1=\"" << f(left) << "\" y1=\"" << f(top + plotH) << "\" x2=\""
     << f(left + plotW) << "\" y2=\"" << f(top + plotH) << "\"/>"
     << "<line class=\"axis\" x1=\"" << f(left) << "\" y1=\"" << f(top) << "\" x2=\"" << f(left)
     << "\" y2=\"" << f(top + plotH) << "\"/>\n";
  os << "</svg>\n";
}

void printKernelTable(const CompileReport &r, llvm::raw_ostream &os) {
  os << "<table id=\"kernel-table\" class=\"sortable\">\n<thead><tr><th class=\"num\">#</th>"
        "<th>name</th><th>kernel</th><th>fused ops</th><th>ONNX nodes</th>"
        "<th class=\"num\">grid</th><th class=\"num\">block</th><th class=\"num\">shared "
        "mem</th><th class=\"num\">bytes read</th><th class=\"num\">bytes written</th>"
        "<th class=\"num\">FLOPs</th><th class=\"num\">FLOP/byte</th></tr></thead>\n<tbody>\n";
  uint64_t totalRead = 0, totalWritten = 0, totalFlops = 0;
  for (auto [i, l] : llvm::enumerate(r.launches)) {
    const KernelCost &c = l.metadata.cost;
    totalRead += c.bytesRead;
    totalWritten += c.bytesWritten;
    totalFlops += c.flops;
    uint64_t bytes = c.bytesRead + c.bytesWritten;
    double intensity = bytes ? double(c.flops) / double(bytes) : 0;
    os << "<tr class=\"launch\">";
    numCell(os, i, std::to_string(i));
    os << "<td>" << esc(l.metadata.name) << "</td><td class=\"mono\">" << esc(l.kernel)
       << "<br><span class=\"muted\">" << esc(l.function) << "</span></td><td class=\"mono\" "
       << "title=\"" << esc(llvm::join(l.metadata.ops, " ")) << "\">"
       << esc(opCounts(l.metadata.ops)) << "</td>";
    // The first three nodes; all stored ones in the tooltip.
    constexpr size_t kShown = 3;
    os << "<td class=\"mono\" title=\"";
    llvm::interleave(
        l.metadata.nodes, os, [&](const std::string &node) { os << esc(node); }, "&#10;");
    os << "\">"
       << esc(llvm::join(ArrayRef(l.metadata.nodes).take_front(kShown), ", "));
    if (l.metadata.nodeCount > kShown)
      os << " <span class=\"muted\">+" << (l.metadata.nodeCount - kShown) << " more</span>";
    os << "</td>";
    numCell(os, double(l.grid[0]) * l.grid[1] * l.grid[2], dim3String(l.grid));
    numCell(os, double(l.block[0]) * l.block[1] * l.block[2], dim3String(l.block));
    numCell(os, l.sharedMemBytes, withCommas(l.sharedMemBytes));
    numCell(os, double(c.bytesRead), withCommas(c.bytesRead));
    numCell(os, double(c.bytesWritten), withCommas(c.bytesWritten));
    numCell(os, double(c.flops), withCommas(c.flops));
    numCell(os, intensity, llvm::formatv("{0:f2}", intensity).str());
    os << "</tr>\n";
  }
  os << "</tbody>\n<tfoot><tr class=\"total\"><td></td><td>total, " << r.launches.size()
     << " launches</td><td></td><td></td><td></td><td></td><td></td><td></td><td class=\"num\">"
     << withCommas(totalRead) << "</td><td class=\"num\">" << withCommas(totalWritten)
     << "</td><td class=\"num\">" << withCommas(totalFlops) << "<br>"
     << esc(humanFlops(totalFlops)) << "</td><td></td></tr></tfoot>\n</table>\n";
}

void printPhaseTable(const CompileReport &r, llvm::raw_ostream &os) {
  double sum = 0, longest = 0;
  for (const ReportPhase &p : r.phases) {
    sum += p.ms;
    longest = std::max(longest, p.ms);
  }
  os << "<table id=\"phase-table\">\n<thead><tr><th>phase</th><th class=\"num\">ms</th>"
        "<th class=\"num\">share</th><th style=\"width:320px\"></th></tr></thead>\n<tbody>\n";
  auto row = [&](llvm::StringRef name, double ms, const char *cls) {
    double share = r.totalMs > 0 ? 100 * ms / r.totalMs : 0;
    double w = longest > 0 ? 100 * ms / longest : 0;
    os << "<tr class=\"" << cls << "\"><td>" << esc(name) << "</td><td class=\"num\">"
       << llvm::formatv("{0:f1}", ms) << "</td><td class=\"num\">"
       << llvm::formatv("{0:f1}", share) << "%</td><td><div class=\"bar\" style=\"width:"
       << llvm::formatv("{0:f1}", std::min(100.0, w)) << "%\"></div></td></tr>\n";
  };
  for (const ReportPhase &p : r.phases)
    row(p.name, p.ms, "phase");
  if (r.totalMs - sum >= 0.05)
    row("outside any phase", r.totalMs - sum, "other");
  os << "</tbody>\n<tfoot><tr class=\"total\"><td>total</td><td class=\"num\">"
     << llvm::formatv("{0:f1}", r.totalMs) << "</td><td></td><td></td></tr></tfoot>\n</table>\n";
}

void printBufferTable(const CompileReport &r, llvm::raw_ostream &os) {
  os << "<details><summary>" << r.buffers.size()
     << " buffers</summary>\n<table id=\"buffer-table\" class=\"sortable\">\n<thead><tr>"
        "<th class=\"num\">#</th><th>computed by</th><th>kernel result</th><th>type</th>"
        "<th class=\"num\">bytes</th><th class=\"num\">arena bytes</th><th class=\"num\">"
        "offset</th><th class=\"num\">launches</th><th>graph output</th></tr></thead>\n<tbody>\n";
  for (auto [i, b] : llvm::enumerate(r.buffers)) {
    os << "<tr class=\"buffer\">";
    numCell(os, i, std::to_string(i));
    os << "<td class=\"mono\">" << esc(b.name) << "</td><td class=\"mono\">@" << esc(b.kernel)
       << " #" << b.result << "</td><td class=\"mono\">" << esc(b.type) << "</td>";
    numCell(os, b.bytes, withCommas(b.bytes));
    numCell(os, b.arenaBytes, withCommas(b.arenaBytes));
    numCell(os, b.offset, withCommas(b.offset));
    numCell(os, b.firstLaunch,
            std::to_string(b.firstLaunch) + "&ndash;" + std::to_string(b.lastLaunch) +
                (b.liveToEnd ? "+" : ""));
    os << "<td class=\"mono\">" << esc(b.output) << "</td></tr>\n";
  }
  os << "</tbody>\n</table>\n</details>\n";
}

} // namespace

void kiln::printCompileReportHtml(const CompileReport &r, llvm::raw_ostream &os) {
  std::string title = llvm::sys::path::filename(r.model).str();
  if (r.worldSize > 1)
    title += llvm::formatv(", rank {0} of {1}", r.rank, r.worldSize).str();
  os << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
     << "<title>kiln-compile report: " << esc(title) << "</title>\n<style>" << kStyle
     << "</style>\n</head>\n<body>\n<h1>kiln-compile report: " << esc(title) << "</h1>\n";

  uint64_t flops = 0, bytes = 0;
  for (const ReportLaunch &l : r.launches) {
    flops += l.metadata.cost.flops;
    bytes += l.metadata.cost.bytesRead + l.metadata.cost.bytesWritten;
  }
  auto fact = [&](llvm::StringRef name, const std::string &htmlValue) {
    os << "<tr><th>" << name << "</th><td>" << htmlValue << "</td></tr>\n";
  };
  os << "<table class=\"facts\">\n";
  fact("model", "<code>" + esc(r.model) + "</code>");
  fact("shapes", r.shapes.empty() ? "<span class=\"muted\">from the model</span>"
                                  : "<code>" + esc(r.shapes) + "</code>");
  fact("precision", esc(r.precision));
  fact("targets", esc(llvm::join(r.targets, ", ")));
  fact("artifact", "<code>" + esc(r.artifact) + "</code>");
  if (r.worldSize > 1)
    fact("tensor parallel", llvm::formatv("rank {0} of {1}, {2} all-reduces", r.rank,
                                          r.worldSize, r.allReducesBefore.size())
                                .str());
  fact("launches", std::to_string(r.launches.size()));
  fact("arena", withCommas(r.arenaBytes) + " bytes (" + esc(humanBytes(r.arenaBytes)) +
                    "), peak first reached at launch " + std::to_string(r.peakLaunch));
  fact("buffers", std::to_string(r.buffers.size()) + ", " + withCommas(r.intermediateBytes) +
                      " bytes without reuse" +
                      (r.arenaBytes > 0
                           ? llvm::formatv(" ({0:f2}&times; the arena)",
                                           double(r.intermediateBytes) / r.arenaBytes)
                                 .str()
                           : std::string()));
  fact("most bytes live at once",
       withCommas(r.maxLiveBytes) + " at launch " + std::to_string(r.maxLiveLaunch));
  fact("estimated work", esc(humanFlops(flops)) + ", " + esc(humanBytes(bytes)) +
                             " of compulsory DRAM traffic");
  fact("compile time", llvm::formatv("{0:f1} ms", r.totalMs).str());
  os << "</table>\n";

  os << "<h2 id=\"memory\">Memory plan</h2>\n<p>Each rectangle is a buffer of the activation "
        "arena: from the launch that writes it to the last launch that reads it (left to "
        "right) at its offset in the arena (bottom to top), coloured by model layer; graph "
        "outputs are outlined and live to the end. The black line is the number of bytes live "
        "at each launch, the red dashed line the arena size and the first launch whose live "
        "buffers reach it. Hover over a buffer for its details.</p>\n";
  printMemorySvg(r, os);
  os << "<h2 id=\"kernels\">Kernels</h2>\n<p>One row per launch in schedule order (click a "
        "column to sort). Bytes are the compulsory DRAM traffic: each operand read once and "
        "each result written once; FLOPs count a multiply-add as two (counting rules: "
        "docs/report.md).</p>\n";
  printKernelTable(r, os);
  os << "<h2 id=\"phases\">Compile phases</h2>\n";
  if (r.worldSize > 1)
    os << "<p>For the whole compile: the ranks' phases are added together.</p>\n";
  printPhaseTable(r, os);
  os << "<h2 id=\"buffers\">Buffers</h2>\n";
  printBufferTable(r, os);
  os << "<script>" << kScript << "</script>\n</body>\n</html>\n";
}

llvm::Error kiln::prepareReportDirectory(llvm::StringRef dir, llvm::StringRef option) {
  std::string opt = option.str();
  if (dir.empty())
    return llvm::createStringError("%s needs a directory name", opt.c_str());
  llvm::sys::fs::file_status status;
  if (!llvm::sys::fs::status(dir, status) && llvm::sys::fs::exists(status) &&
      !llvm::sys::fs::is_directory(status))
    return llvm::createStringError("%s directory '%s' exists and is not a directory", opt.c_str(),
                                   dir.str().c_str());
  // 0777 less the umask, like mkdir -p (LLVM's default leaves out "others").
  if (std::error_code ec =
          llvm::sys::fs::create_directories(dir, /*IgnoreExisting=*/true, llvm::sys::fs::all_all))
    return llvm::createStringError(ec, "cannot create %s directory '%s': %s", opt.c_str(),
                                   dir.str().c_str(), ec.message().c_str());
  llvm::SmallString<256> probe(dir);
  llvm::sys::path::append(probe, ".kiln-probe-%%%%%%");
  int fd = -1;
  llvm::SmallString<256> created;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(probe, fd, created))
    return llvm::createStringError(ec, "cannot write into %s directory '%s': %s", opt.c_str(),
                                   dir.str().c_str(), ec.message().c_str());
  llvm::sys::fs::closeFile(fd);
  llvm::sys::fs::remove(created);
  return llvm::Error::success();
}

llvm::Error kiln::writeCompileReport(const CompileReport &report, llvm::StringRef dir) {
  llvm::SmallString<256> html(dir), json(dir);
  llvm::sys::path::append(html, "index.html");
  llvm::sys::path::append(json, "report.json");
  if (llvm::Error e = writeOutputFile(html, [&](llvm::raw_ostream &os) {
        printCompileReportHtml(report, os);
      }))
    return e;
  return writeOutputFile(json, [&](llvm::raw_ostream &os) {
    os << llvm::formatv("{0:2}", compileReportToJson(report)) << "\n";
  });
}

llvm::Error kiln::writeRankIndex(llvm::ArrayRef<CompileReport> ranks, llvm::StringRef dir) {
  llvm::SmallString<256> html(dir);
  llvm::sys::path::append(html, "index.html");
  return writeOutputFile(html, [&](llvm::raw_ostream &os) {
    std::string model =
        ranks.empty() ? std::string() : llvm::sys::path::filename(ranks.front().model).str();
    os << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
       << "<title>kiln-compile report: " << esc(model) << ", " << ranks.size()
       << " ranks</title>\n<style>" << kStyle << "</style>\n</head>\n<body>\n"
       << "<h1>kiln-compile report: " << esc(model) << ", " << ranks.size()
       << " tensor-parallel ranks</h1>\n<table id=\"rank-table\">\n<thead><tr><th>rank</th>"
          "<th class=\"num\">launches</th><th class=\"num\">all-reduces</th><th class=\"num\">"
          "arena bytes</th><th class=\"num\">FLOPs</th><th>artifact</th></tr></thead>\n<tbody>\n";
    for (const CompileReport &r : ranks) {
      uint64_t flops = 0;
      for (const ReportLaunch &l : r.launches)
        flops += l.metadata.cost.flops;
      os << "<tr class=\"rank\"><td><a href=\"rank" << r.rank << "/index.html\">rank " << r.rank
         << "</a></td><td class=\"num\">" << r.launches.size() << "</td><td class=\"num\">"
         << r.allReducesBefore.size() << "</td><td class=\"num\">" << withCommas(r.arenaBytes)
         << "</td><td class=\"num\">" << withCommas(flops) << "</td><td><code>"
         << esc(r.artifact) << "</code></td></tr>\n";
    }
    os << "</tbody>\n</table>\n</body>\n</html>\n";
  });
}
