//===- ArtifactWriter.cpp - write a .kiln artifact ------------------------===//
//
// Layout written: header (64 bytes) | blobs, each at a 256-byte aligned
// offset (per module: PTX, then one cubin per target; then the weight
// segment) | FlatBuffers index (8-byte aligned) at the end. The header
// carries the CRC-32 of everything after it. Weights are the constants that
// kernels read, each placed at a 256-byte aligned offset in the weight
// segment, in first-use order (deterministic).
//
// The file is written to a temporary file next to the destination and renamed
// over it only when complete, so a failed write never destroys a previous
// artifact; "-" (or a path naming stdout) writes to stdout and an existing
// non-regular file (/dev/null) is written in place.
//
//===----------------------------------------------------------------------===//

#include "compiler/artifact/ArtifactWriter.h"

#include "dialects/kiln/KernelPlan.h"

#include "dialects/kiln/KilnOps.h"
#include "dialects/kiln/KilnTarget.h"

#include "ArtifactHeader.h"
#include "kiln_artifact_generated.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/xxhash.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

using namespace mlir;
using namespace kiln;
namespace fb = kiln::artifact;

using TensorMapArg = codegen::GeneratedKernel::TensorMapArg;
static_assert(static_cast<int>(TensorMapArg::Swizzle::None) ==
                      static_cast<int>(fb::TensorMapSwizzle::None) &&
                  static_cast<int>(TensorMapArg::Swizzle::B32) ==
                      static_cast<int>(fb::TensorMapSwizzle::B32) &&
                  static_cast<int>(TensorMapArg::Swizzle::B64) ==
                      static_cast<int>(fb::TensorMapSwizzle::B64) &&
                  static_cast<int>(TensorMapArg::Swizzle::B128) ==
                      static_cast<int>(fb::TensorMapSwizzle::B128),
              "TensorMapArg::Swizzle must equal kiln.artifact.TensorMapSwizzle");

namespace {

llvm::Expected<fb::DType> toDType(Type t) {
  if (t.isF32())
    return fb::DType::F32;
  if (t.isF16())
    return fb::DType::F16;
  if (t.isBF16())
    return fb::DType::BF16;
  if (t.isInteger(1))
    return fb::DType::Bool;
  if (auto it = dyn_cast<IntegerType>(t)) {
    bool u = it.isUnsigned();
    switch (it.getWidth()) {
    case 64:
      return u ? fb::DType::U64 : fb::DType::I64;
    case 32:
      return u ? fb::DType::U32 : fb::DType::I32;
    case 16:
      return u ? fb::DType::U16 : fb::DType::I16;
    case 8:
      return u ? fb::DType::U8 : fb::DType::I8;
    default:
      break;
    }
  }
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return llvm::createStringError("unsupported: element type %s in the artifact", s.c_str());
}

int64_t tensorBytes(Type t) {
  auto rt = cast<RankedTensorType>(t);
  return rt.getNumElements() * getElementByteSize(rt.getElementType());
}

/// Appends the little-endian bytes of a constant (splats expanded, i1 as one byte each) to `out`,
/// in place: the weights of a large model are copied once here, not through a temporary.
void appendConstantBytes(DenseElementsAttr attr, std::string &out) {
  Type et = attr.getElementType();
  int64_t n = attr.getNumElements();
  if (et.isInteger(1)) {
    out.reserve(out.size() + n);
    for (bool b : attr.getValues<bool>())
      out.push_back(b ? 1 : 0);
    return;
  }
  ArrayRef<char> raw = attr.getRawData();
  if (attr.isSplat()) {
    out.reserve(out.size() + size_t(n) * raw.size());
    for (int64_t i = 0; i < n; ++i)
      out.append(raw.data(), raw.size());
    return;
  }
  out.append(raw.data(), raw.size());
}

/// The artifact's weight segment as a list of pieces at 256-byte aligned offsets, zeros between
/// them: a piece is the constant's own bytes in the MLIR context (no copy) or, for splats and i1
/// constants, whose file form differs from their storage, an expanded copy. The segment is
/// streamed into the checksum and the file, so a model's weights are never copied into one
/// buffer (which would hold a second copy of every weight while the file is written).
class WeightSegment {
public:
  /// Appends `attr`'s little-endian bytes (appendConstantBytes's form) at the next aligned
  /// offset, or, with `shareByContent`, reuses an earlier piece of equal bytes; returns the
  /// offset.
  uint64_t add(DenseElementsAttr attr, bool shareByContent) {
    uint64_t begin = llvm::alignTo(end, artifact::kBlobAlignment);
    Piece piece;
    piece.offset = begin;
    if (attr.isSplat() || attr.getElementType().isInteger(1)) {
      piece.owned = std::make_unique<std::string>();
      appendConstantBytes(attr, *piece.owned);
      piece.bytes = *piece.owned;
    } else {
      ArrayRef<char> raw = attr.getRawData();
      piece.bytes = StringRef(raw.data(), raw.size());
    }
    // Programs after the first share the weight segment: a constant whose bytes are already
    // there (the same weight, imported again at another shape) is stored once.
    uint64_t hash = llvm::xxh3_64bits(piece.bytes);
    if (shareByContent)
      for (size_t index : byContent.lookup(hash))
        if (pieces[index].bytes == piece.bytes) {
          end = begin; // as if the padding before this constant had been written
          return pieces[index].offset;
        }
    byContent[hash].push_back(pieces.size());
    end = begin + piece.bytes.size();
    pieces.push_back(std::move(piece));
    return begin;
  }

  /// The segment's size in bytes (its end; padding included up to the last piece or reuse).
  uint64_t size() const { return end; }

  /// Calls `fn(bytes)` on the segment's bytes in order, padding included, in ranges of at most
  /// `maxRange` bytes.
  void forEachRange(size_t maxRange, llvm::function_ref<void(StringRef)> fn) const {
    static const char kZeros[4096] = {};
    uint64_t at = 0;
    auto zeros = [&](uint64_t to) {
      while (at < to) {
        uint64_t n = std::min<uint64_t>(sizeof(kZeros), to - at);
        fn(StringRef(kZeros, n));
        at += n;
      }
    };
    for (const Piece &piece : pieces) {
      zeros(piece.offset);
      for (size_t i = 0; i < piece.bytes.size(); i += maxRange)
        fn(piece.bytes.substr(i, maxRange));
      at = piece.offset + piece.bytes.size();
    }
    zeros(end);
  }

private:
  struct Piece {
    uint64_t offset = 0;
    StringRef bytes;
    std::unique_ptr<std::string> owned;
  };
  std::vector<Piece> pieces;
  uint64_t end = 0;
  /// Pieces by the xxh3 hash of their bytes.
  llvm::DenseMap<uint64_t, llvm::SmallVector<size_t, 1>> byContent;
};

/// Resolves function-level values to buffer references.
class BufferResolver {
public:

  llvm::Expected<flatbuffers::Offset<fb::BufferRef>> ref(flatbuffers::FlatBufferBuilder &fbb,
                                                         Value v) {
    uint64_t size = tensorBytes(v.getType());
    // Views and in-place all-reduces share their operand's buffer.
    v = viewSource(v);
    if (auto arg = dyn_cast<BlockArgument>(v))
      return fb::CreateBufferRef(fbb, fb::Segment::Input, arg.getArgNumber(), 0, size);
    if (auto constant = v.getDefiningOp<ConstantOp>()) {
      auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
      if (!dense)
        return llvm::createStringError("unsupported: constant without dense elements");
      auto [it, inserted] = weightOffset.try_emplace(v, 0);
      if (inserted) {
        it->second = weights.add(dense, shareByContent);
        if (observer && observer->onProgress)
          observer->onProgress(weights.size(), std::max<uint64_t>(weights.size(), totalBytes));
      }
      return fb::CreateBufferRef(fbb, fb::Segment::Weights, 0, it->second, size);
    }
    if (auto kernel = v.getDefiningOp<KernelOp>()) {
      auto offsets = kernel.getArenaOffsets();
      if (!offsets)
        return llvm::createStringError("kernel @%s has no arena offsets: run kiln-plan-memory",
                                       kernel.getSymName().str().c_str());
      return fb::CreateBufferRef(fbb, fb::Segment::Arena, 0,
                                 (*offsets)[cast<OpResult>(v).getResultNumber()], size);
    }
    return llvm::createStringError("value is neither an input, a constant nor a kernel result");
  }

  WeightSegment weights;
  /// Progress reports while packing (may be null) and the expected total.
  const ArtifactWriteObserver *observer = nullptr;
  uint64_t totalBytes = 0;
  /// Set while resolving programs after the first: constants reuse equal bytes already packed.
  bool shareByContent = false;

private:
  llvm::MapVector<Value, uint64_t> weightOffset;
};

/// The values a KV-cache step's block table and sequence lengths may hold (kiln-compile
/// --kv-cache): block ids [0, pool blocks - 1]; lengths [0, blocks per sequence x block size -
/// tokens per step], so that the step's tokens stay inside the sequence's blocks. std::nullopt
/// when the function lacks the inputs these come from.
std::optional<InputValueRange> generationInputRange(func::FuncOp func, fb::InputRole role) {
  int64_t poolBlocks = -1, blockSize = -1, maxBlocks = -1, tokens = -1;
  for (BlockArgument arg : func.getArguments()) {
    auto r = func.getArgAttrOfType<InputRoleAttr>(arg.getArgNumber(), kRoleAttrName);
    auto shape = cast<RankedTensorType>(arg.getType()).getShape();
    if (!r)
      continue;
    if (r.getValue() == InputRole::KeyCache && shape.size() == 4)
      poolBlocks = shape[0], blockSize = shape[2];
    else if (r.getValue() == InputRole::BlockTable && shape.size() == 2)
      maxBlocks = shape[1];
    else if (r.getValue() == InputRole::PositionIds && shape.size() == 2)
      tokens = shape[1];
  }
  if (role == fb::InputRole::BlockTable && poolBlocks > 0)
    return InputValueRange{0, poolBlocks - 1};
  if (role == fb::InputRole::SeqLens && blockSize > 0 && maxBlocks > 0 && tokens > 0 &&
      maxBlocks * blockSize >= tokens)
    return InputValueRange{0, maxBlocks * blockSize - tokens};
  return std::nullopt;
}

std::string nameOf(DictionaryAttr attrs, const std::string &fallback) {
  if (attrs)
    if (auto s = attrs.getAs<StringAttr>("kiln.name"))
      return s.str();
  return fallback;
}

/// Takes the error of a closed or flushed stream and clears it (a stream
/// destroyed with an error aborts the process).
std::error_code takeStreamError(llvm::raw_fd_ostream &os) {
  std::error_code error = os.error();
  os.clear_error();
  return error;
}

} // namespace

/// Writes the bytes that `write` produces to `path`:
///   1. "-" or a path naming stdout (isStandardOutput): to llvm::outs();
///   2. an existing file that is not a regular file (/dev/null, a FIFO): in
///      place, since it cannot be replaced;
///   3. otherwise to a temporary file `<path>.tmp-XXXXXX` in the destination's
///      directory, renamed over `path` only after every byte was written. On
///      failure the temporary file is removed and a previous file at `path`
///      stays as it was. A symbolic link is followed (its target is replaced).
/// Errors name `path` (or stdout), never the temporary file.
mlir::Value kiln::viewSource(mlir::Value v) {
  while (true) {
    if (auto view = v.getDefiningOp<ReshapeOp>())
      v = view.getInput();
    else if (auto reduce = v.getDefiningOp<AllReduceOp>())
      v = reduce.getInput();
    else if (auto kernel = v.getDefiningOp<KernelOp>();
             kernel && getInPlaceInput(kernel, cast<OpResult>(v).getResultNumber()))
      v = kernel.getInputs()[*getInPlaceInput(kernel, cast<OpResult>(v).getResultNumber())];
    else
      return v;
  }
}

llvm::SmallString<256> kiln::outputDestination(llvm::StringRef path) {
  llvm::SmallString<256> destination(path);
  if (llvm::sys::fs::is_symlink_file(path)) {
    llvm::SmallString<256> resolved;
    if (!llvm::sys::fs::real_path(path, resolved))
      destination = resolved;
  }
  return destination;
}

llvm::Error kiln::writeOutputFile(StringRef path,
                                  llvm::function_ref<void(llvm::raw_ostream &)> write) {
  auto writeError = [&](std::error_code ec) {
    return llvm::createStringError(ec, "cannot write '%s': %s", path.str().c_str(),
                                   ec.message().c_str());
  };
  if (isStandardOutput(path)) {
    llvm::raw_fd_ostream &os = llvm::outs();
    write(os);
    os.flush();
    if (os.has_error()) {
      std::error_code ec = takeStreamError(os);
      return llvm::createStringError(ec, "cannot write the artifact to stdout: %s",
                                     ec.message().c_str());
    }
    return llvm::Error::success();
  }

  llvm::SmallString<256> destination = outputDestination(path);
  llvm::sys::fs::file_status existing;
  if (!llvm::sys::fs::status(destination, existing) && llvm::sys::fs::exists(existing) &&
      !llvm::sys::fs::is_regular_file(existing)) {
    // O_NONBLOCK: opening a FIFO without a reader would block forever; it
    // fails with ENXIO instead. Writes then block as usual.
    int fd = ::open(destination.c_str(), O_WRONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
      int error = errno;
      std::error_code ec(error, std::generic_category());
      return llvm::createStringError(
          ec, "cannot open '%s' for writing: %s", path.str().c_str(),
          error == ENXIO ? "it is a FIFO that no process is reading" : ec.message().c_str());
    }
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    write(os);
    os.close();
    if (os.has_error())
      return writeError(takeStreamError(os));
    return llvm::Error::success();
  }

  int fd = -1;
  llvm::SmallString<256> tempPath;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueFile(destination + ".tmp-%%%%%%", fd, tempPath))
    return llvm::createStringError(ec, "cannot open '%s' for writing: %s", path.str().c_str(),
                                   ec.message().c_str());
  llvm::sys::RemoveFileOnSignal(tempPath);
  auto discard = [&] {
    llvm::sys::fs::remove(tempPath);
    llvm::sys::DontRemoveFileOnSignal(tempPath);
  };
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    write(os);
    os.close();
    if (os.has_error()) {
      std::error_code ec = takeStreamError(os);
      discard();
      return writeError(ec);
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(tempPath, destination)) {
    discard();
    return llvm::createStringError(ec, "cannot replace '%s' with the new file: %s",
                                   path.str().c_str(), ec.message().c_str());
  }
  llvm::sys::DontRemoveFileOnSignal(tempPath);
  return llvm::Error::success();
}

bool kiln::isStandardOutput(StringRef path) {
  if (path == "-")
    return true;
  llvm::sys::fs::file_status out, file;
  if (llvm::sys::fs::status(STDOUT_FILENO, out) || llvm::sys::fs::status(path, file))
    return false;
  return llvm::sys::fs::equivalent(out, file);
}

llvm::Expected<ArtifactStats> kiln::writeArtifact(func::FuncOp func,
                                                  ArrayRef<ArtifactModule> modules,
                                                  ArrayRef<ArtifactLaunch> launches, StringRef path,
                                                  ArrayRef<ArtifactCollective> collectives,
                                                  const ArtifactTensorParallel &tp,
                                                  const ArtifactWriteObserver *observer) {
  ArtifactProgram program{"", func, launches};
  return writeArtifact(ArrayRef<ArtifactProgram>(program), modules, path, collectives, tp,
                       observer);
}

namespace {
/// One program's tables in the index being built.
struct ProgramTables {
  std::vector<flatbuffers::Offset<fb::Launch>> launches;
  std::vector<flatbuffers::Offset<fb::TensorDesc>> inputs, outputs;
  uint64_t arenaBytes = 0;
  bool anyTensorMaps = false;
  /// The program's estimated time (estimateProgramMicroseconds), 0 when unknown.
  float estimatedUs = 0;
};
} // namespace

double kiln::estimateProgramMicroseconds(const ArtifactProgram &program) {
  if (!program.func)
    return 0;
  std::optional<TargetRates> rates = getTargetRates(getTargetOrDefault(program.func).getName());
  if (!rates)
    return 0;
  // The program's precision picks the compute rate; its kernels other than GEMMs and attention
  // have few FLOPs per byte, so the memory term decides them either way.
  const Precision precision = getPrecision(program.func);
  double seconds = 0;
  for (const ArtifactLaunch &l : program.launches)
    seconds += estimateLaunchSeconds(*rates, l.metadata.cost.flops,
                                     l.metadata.cost.bytesRead + l.metadata.cost.bytesWritten,
                                     precision);
  return seconds * 1e6;
}

llvm::Expected<ArtifactStats> kiln::writeArtifact(ArrayRef<ArtifactProgram> programs,
                                                  ArrayRef<ArtifactModule> modules, StringRef path,
                                                  ArrayRef<ArtifactCollective> collectives,
                                                  const ArtifactTensorParallel &tp,
                                                  const ArtifactWriteObserver *observer) {
  if (programs.empty())
    return llvm::createStringError("internal error: an artifact needs at least one program");
  if (programs.size() > 1 && (!collectives.empty() || tp.worldSize > 1))
    return llvm::createStringError("internal error: a tensor-parallel artifact has one program");
  llvm::StringSet<> programNames;
  for (const ArtifactProgram &p : programs)
    if (programs.size() > 1 && (p.name.empty() || !programNames.insert(p.name).second))
      return llvm::createStringError("internal error: program name '%s' is empty or repeated",
                                     p.name.c_str());
  auto step = [&](StringRef name) {
    if (observer && observer->onStep)
      observer->onStep(name);
  };
  flatbuffers::FlatBufferBuilder fbb(1 << 16);
  BufferResolver resolver;
  resolver.observer = observer;
  // The weight segment holds the functions' constants (each once, aligned):
  // their sum is the total that packing progress is reported against.
  for (const ArtifactProgram &p : programs)
    for (ConstantOp constant : func::FuncOp(p.func).getBody().front().getOps<ConstantOp>())
      resolver.totalBytes +=
          llvm::alignTo(tensorBytes(constant.getType()), artifact::kBlobAlignment);
  step("pack weights");

  // Blobs are laid out after the header in this order.
  std::string blobs;
  auto addBlob = [&](const std::string &bytes) {
    uint64_t offset = artifact::alignBlobOffset(artifact::kHeaderSize + blobs.size());
    blobs.resize(offset - artifact::kHeaderSize, '\0');
    blobs += bytes;
    return fb::Blob(offset, bytes.size());
  };

  std::vector<flatbuffers::Offset<fb::Module>> fbModules;
  for (const ArtifactModule &m : modules) {
    fb::Blob ptx = addBlob(m.code.ptx);
    std::vector<flatbuffers::Offset<fb::Cubin>> cubins;
    for (const codegen::CubinImage &c : m.code.cubins) {
      fb::Blob image = addBlob(c.image);
      cubins.push_back(fb::CreateCubin(fbb, c.arch, &image));
    }
    fbModules.push_back(fb::CreateModuleDirect(fbb, m.name.c_str(), &ptx, &cubins));
  }

  auto buildProgram = [&](const ArtifactProgram &program) -> llvm::Expected<ProgramTables> {
  func::FuncOp func = program.func;
  ProgramTables tables;
  std::vector<flatbuffers::Offset<fb::Launch>> &fbLaunches = tables.launches;
  bool &anyTensorMaps = tables.anyTensorMaps;
  for (const ArtifactLaunch &l : program.launches) {
    std::vector<flatbuffers::Offset<fb::BufferRef>> args;
    for (Value v : l.args) {
      auto r = resolver.ref(fbb, v);
      if (!r)
        return r.takeError();
      args.push_back(*r);
    }
    // Tensor maps: the field stays absent when there are none, so such files are unchanged.
    std::vector<flatbuffers::Offset<fb::TensorMap>> maps;
    for (const TensorMapArg &map : l.tensorMaps) {
      if (map.arg >= l.args.size())
        return llvm::createStringError(
            "internal error: tensor map %zu of kernel %s addresses argument %u of %zu", maps.size(),
            l.function.c_str(), map.arg, l.args.size());
      auto dtype = toDType(map.elementType);
      if (!dtype)
        return dtype.takeError();
      std::vector<uint64_t> dims(map.dims.begin(), map.dims.end());
      std::vector<uint64_t> strides(map.strides.begin(), map.strides.end());
      std::vector<uint32_t> box(map.box.begin(), map.box.end());
      maps.push_back(fb::CreateTensorMapDirect(fbb, map.arg, map.offsetBytes, *dtype, &dims,
                                               &strides, &box,
                                               static_cast<fb::TensorMapSwizzle>(map.swizzle)));
    }
    anyTensorMaps |= !maps.empty();
    std::vector<uint32_t> grid(l.grid.begin(), l.grid.end()), block(l.block.begin(), l.block.end());
    // The optional description fields are left out when empty (docs/artifact.md).
    const LaunchMetadata &meta = l.metadata;
    auto optionalString = [&](const std::string &text) {
      return text.empty() ? flatbuffers::Offset<flatbuffers::String>() : fbb.CreateString(text);
    };
    auto optionalStrings = [&](const std::vector<std::string> &texts) {
      return texts.empty() ? flatbuffers::Offset<
                                 flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>>()
                           : fbb.CreateVectorOfStrings(texts);
    };
    auto function = fbb.CreateString(l.function);
    auto gridVec = fbb.CreateVector(grid);
    auto blockVec = fbb.CreateVector(block);
    auto argsVec = fbb.CreateVector(args);
    auto name = optionalString(meta.name);
    auto layer = optionalString(meta.layer);
    auto ops = optionalStrings(meta.ops);
    auto nodes = optionalStrings(meta.nodes);
    auto mapsVec =
        maps.empty()
            ? flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::TensorMap>>>()
            : fbb.CreateVector(maps);
    fbLaunches.push_back(fb::CreateLaunch(fbb, l.module, function, gridVec, blockVec,
                                          l.sharedMemBytes, argsVec, name, layer, ops, nodes,
                                          meta.nodeCount, meta.cost.flops, meta.cost.bytesRead,
                                          meta.cost.bytesWritten, mapsVec,
                                          l.programmaticLaunch));
  }

  auto describe = [&](Type t, const std::string &name, flatbuffers::Offset<fb::BufferRef> loc,
                      std::optional<InputValueRange> range = std::nullopt,
                      fb::InputRole role =
                          fb::InputRole::Data) -> llvm::Expected<flatbuffers::Offset<fb::TensorDesc>> {
    auto rt = cast<RankedTensorType>(t);
    auto dtype = toDType(rt.getElementType());
    if (!dtype)
      return dtype.takeError();
    std::vector<int64_t> shape(rt.getShape().begin(), rt.getShape().end());
    fb::ValueRange fbRange(range ? range->min : 0, range ? range->max : 0);
    return fb::CreateTensorDescDirect(fbb, name.c_str(), *dtype, &shape, loc,
                                      range ? &fbRange : nullptr, role);
  };
  std::vector<flatbuffers::Offset<fb::TensorDesc>> &inputs = tables.inputs, &outputs = tables.outputs;
  for (BlockArgument arg : func.getArguments()) {
    std::optional<InputValueRange> range;
    if (isa<IntegerType>(cast<RankedTensorType>(arg.getType()).getElementType()))
      range = indexInputRange(func, arg.getArgNumber());
    fb::InputRole role = fb::InputRole::Data;
    if (auto r = func.getArgAttrOfType<InputRoleAttr>(arg.getArgNumber(), kRoleAttrName))
      role = static_cast<fb::InputRole>(static_cast<int>(r.getValue()) + 1);
    if (!range && (role == fb::InputRole::BlockTable || role == fb::InputRole::SeqLens))
      range = generationInputRange(func, role);
    auto d = describe(arg.getType(),
                      nameOf(func.getArgAttrDict(arg.getArgNumber()),
                             "input" + std::to_string(arg.getArgNumber())),
                      0, range, role);
    if (!d)
      return d.takeError();
    inputs.push_back(*d);
  }
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  if (ret.getNumOperands() == 0)
    return llvm::createStringError("the model has no outputs; nothing to compile");
  // Names must be unique among the inputs and among the outputs: the runtime binds each by
  // name, inputs and outputs through separate calls (kiln_session_set_input/get_output,
  // kiln_artifact_find_input/_output), so an output may carry an input's name. Such an output is
  // the input passed through (ONNX allows a graph output to be a graph input): its location is
  // the input, as for an input returned under another name (Identity), and the runtime copies
  // the input's values into the output's buffer.
  llvm::StringSet<> inputNames, outputNames;
  for (BlockArgument arg : func.getArguments()) {
    std::string name =
        nameOf(func.getArgAttrDict(arg.getArgNumber()), "input" + std::to_string(arg.getArgNumber()));
    if (!inputNames.insert(name).second)
      return llvm::createStringError(
          "graph input '%s' is listed twice; kiln binds inputs by name, so each may be listed once",
          name.c_str());
  }
  for (unsigned i = 0; i < ret.getNumOperands(); ++i) {
    std::string name = nameOf(func.getResultAttrDict(i), "output" + std::to_string(i));
    if (!outputNames.insert(name).second)
      return llvm::createStringError(
          "graph output '%s' is listed twice; kiln binds outputs by name, so each may be listed "
          "once",
          name.c_str());
  }
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    auto loc = resolver.ref(fbb, v);
    if (!loc)
      return loc.takeError();
    auto d = describe(v.getType(), nameOf(func.getResultAttrDict(i), "output" + std::to_string(i)),
                      *loc);
    if (!d)
      return d.takeError();
    outputs.push_back(*d);
  }
  if (auto a = func->getAttrOfType<IntegerAttr>("kiln.arena_bytes"))
    tables.arenaBytes = a.getInt();
  tables.estimatedUs = float(estimateProgramMicroseconds(program));
  return tables;
  };

  std::vector<ProgramTables> tables;
  for (const ArtifactProgram &program : programs) {
    resolver.shareByContent = !tables.empty();
    auto built = buildProgram(program);
    if (!built)
      return built.takeError();
    tables.push_back(std::move(*built));
  }
  bool anyTensorMaps = llvm::any_of(tables, [](const ProgramTables &t) { return t.anyTensorMaps; });

  std::vector<flatbuffers::Offset<fb::Collective>> fbCollectives;
  for (const ArtifactCollective &c : collectives) {
    auto type = cast<RankedTensorType>(c.value.getType());
    auto dtype = toDType(type.getElementType());
    if (!dtype)
      return dtype.takeError();
    auto ref = resolver.ref(fbb, c.value);
    if (!ref)
      return ref.takeError();
    fbCollectives.push_back(fb::CreateCollective(fbb, fb::CollectiveKind::AllReduceSum, *dtype,
                                                 type.getNumElements(), *ref, *ref,
                                                 c.beforeLaunch));
  }
  bool tensorParallel = tp.worldSize > 1;
  flatbuffers::Offset<fb::TensorParallel> fbTp;
  if (tensorParallel)
    fbTp = fb::CreateTensorParallel(fbb, tp.worldSize, tp.rank, tp.groupHash);
  uint32_t formatVersion =
      artifact::formatVersionFor(anyTensorMaps, tensorParallel || !collectives.empty());

  // The weights are the last blob, streamed from the constants themselves (WeightSegment):
  // `blobs` ends with the padding before them.
  const WeightSegment &weightBytes = resolver.weights;
  uint64_t weightsOffset = artifact::alignBlobOffset(artifact::kHeaderSize + blobs.size());
  blobs.resize(weightsOffset - artifact::kHeaderSize, '\0');
  fb::Blob weights(weightsOffset, weightBytes.size());
  uint64_t blobsEnd = artifact::kHeaderSize + blobs.size() + weightBytes.size();
  std::vector<flatbuffers::Offset<fb::Program>> fbPrograms;
  for (size_t p = 1; p < programs.size(); ++p)
    fbPrograms.push_back(fb::CreateProgramDirect(fbb, programs[p].name.c_str(),
                                                 tables[p].arenaBytes, &tables[p].inputs,
                                                 &tables[p].outputs, &tables[p].launches,
                                                 tables[p].estimatedUs));
  ProgramTables &main = tables.front();
  auto model = fb::CreateModelDirect(
      fbb, formatVersion, "kiln-compile", main.arenaBytes, &weights, &main.inputs, &main.outputs,
      &fbModules, &main.launches, fbTp, tensorParallel ? &fbCollectives : nullptr,
      programs.size() > 1 ? programs.front().name.c_str() : nullptr,
      programs.size() > 1 ? &fbPrograms : nullptr, main.estimatedUs);
  fb::FinishModelBuffer(fbb, model);

  uint64_t indexOffset = llvm::alignTo(blobsEnd, artifact::kIndexAlignment);
  uint64_t indexSize = fbb.GetSize();
  uint64_t fileSize = indexOffset + indexSize;
  std::string padding(indexOffset - blobsEnd, '\0');
  step("checksum");
  // CRC-32 of file bytes [64, fileSize): blobs, padding, index (docs/artifact.md).
  uLong crc = crc32_z(0L, Z_NULL, 0);
  crc = crc32_z(crc, reinterpret_cast<const Bytef *>(blobs.data()), blobs.size());
  constexpr size_t kPiece = size_t(64) << 20;
  weightBytes.forEachRange(kPiece, [&](StringRef bytes) {
    crc = crc32_z(crc, reinterpret_cast<const Bytef *>(bytes.data()), bytes.size());
  });
  crc = crc32_z(crc, reinterpret_cast<const Bytef *>(padding.data()), padding.size());
  crc = crc32_z(crc, fbb.GetBufferPointer(), indexSize);
  uint8_t header[artifact::kHeaderSize];
  artifact::encodeHeader(
      artifact::makeHeader(indexOffset, indexSize, fileSize, static_cast<uint32_t>(crc),
                           formatVersion),
      header);

  step("write file");
  if (llvm::Error error = writeOutputFile(path, [&](llvm::raw_ostream &os) {
        os.write(reinterpret_cast<const char *>(header), sizeof(header));
        // The blobs, then the weights, in pieces of at most 64 MiB, reporting progress after
        // each piece of 64 MiB or more.
        uint64_t written = sizeof(header), reported = 0;
        auto put = [&](StringRef bytes) {
          os.write(bytes.data(), bytes.size());
          written += bytes.size();
          if (observer && observer->onProgress && written - reported >= kPiece) {
            observer->onProgress(written, fileSize);
            reported = written;
          }
        };
        for (size_t at = 0; at < blobs.size(); at += kPiece)
          put(StringRef(blobs).substr(at, kPiece));
        weightBytes.forEachRange(kPiece, put);
        if (observer && observer->onProgress && reported != written)
          observer->onProgress(written, fileSize);
        os << padding;
        os.write(reinterpret_cast<const char *>(fbb.GetBufferPointer()), indexSize);
      }))
    return std::move(error);
  ArtifactStats stats;
  stats.fileBytes = fileSize;
  stats.weightBytes = resolver.weights.size();
  return stats;
}
