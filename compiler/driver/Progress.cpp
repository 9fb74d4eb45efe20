//===- Progress.cpp - compile progress display ----------------------------===//
//
// Implements ProgressReporter (Progress.h): a mutex-guarded state machine
// per phase; the bar is drawn with '\r' and erased with the ANSI "erase to
// end of line" sequence, which every terminal kiln-compile runs on knows.
//
//===----------------------------------------------------------------------===//

#include "compiler/driver/Progress.h"

#include "llvm/Support/Format.h"

using namespace kiln;

ProgressReporter::ProgressReporter(llvm::raw_ostream &os, ProgressMode mode, llvm::StringRef tool,
                                   double delayMs)
    : os(os), mode(mode), tool(tool.str()), delayMs(delayMs) {
  if (mode == ProgressMode::None)
    return;
  ticker = std::thread([this] {
    std::unique_lock<std::mutex> lock(mutex);
    while (!stopping) {
      wake.wait_for(lock, std::chrono::milliseconds(100));
      if (!stopping)
        refresh();
    }
  });
}

ProgressReporter::~ProgressReporter() {
  end();
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
  }
  wake.notify_all();
  if (ticker.joinable())
    ticker.join();
}

double ProgressReporter::elapsedMs() const {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::string ProgressReporter::describeCount() const {
  if (total == 0)
    return "";
  std::string text;
  llvm::raw_string_ostream s(text);
  if (unit == "bytes")
    s << llvm::format("%.0f of %.0f MB", done / 1e6, total / 1e6);
  else
    s << done << " of " << total << " " << unit;
  return text;
}

void ProgressReporter::begin(llvm::StringRef name) {
  end();
  std::lock_guard<std::mutex> lock(mutex);
  phase = name.str();
  start = lastDraw = Clock::now();
  shown = false;
  done = total = 0;
  unit.clear();
  lastTenth = -1;
}

void ProgressReporter::drawBar() {
  constexpr int kWidth = 24;
  int filled = total ? static_cast<int>(kWidth * std::min<uint64_t>(done, total) / total) : 0;
  os << "\r[" << std::string(filled, '#') << std::string(kWidth - filled, ' ') << "] " << phase;
  if (std::string count = describeCount(); !count.empty())
    os << " " << count;
  os << llvm::format(", %.1f s", elapsedMs() / 1000) << "\x1b[K";
  os.flush();
  barDrawn = true;
  lastDraw = Clock::now();
}

void ProgressReporter::update(uint64_t newDone, uint64_t newTotal, llvm::StringRef newUnit) {
  std::lock_guard<std::mutex> lock(mutex);
  if (mode == ProgressMode::None || phase.empty())
    return;
  done = newDone;
  total = newTotal;
  unit = newUnit.str();
  refresh();
}

void ProgressReporter::refresh() {
  if (mode == ProgressMode::None || phase.empty() || elapsedMs() < delayMs)
    return;
  if (mode == ProgressMode::Bar) {
    if (!barDrawn ||
        std::chrono::duration<double, std::milli>(Clock::now() - lastDraw).count() >= 100 ||
        (total && done == total))
      drawBar();
    shown = true;
    return;
  }
  if (!shown) {
    os << tool << ": " << phase << "...\n";
    shown = true;
  }
  int tenth = total ? static_cast<int>(10 * std::min<uint64_t>(done, total) / total) : 0;
  if (tenth > lastTenth && total) {
    os << tool << ": " << phase << ": " << describeCount() << "\n";
    lastTenth = tenth;
  }
  os.flush();
}

void ProgressReporter::end(bool completed) {
  std::lock_guard<std::mutex> lock(mutex);
  if (phase.empty())
    return;
  if (mode == ProgressMode::Lines && completed && (shown || elapsedMs() >= delayMs)) {
    if (!shown)
      os << tool << ": " << phase << "...\n";
    os << tool << ": " << phase << llvm::format(" done in %.1f s", elapsedMs() / 1000) << "\n";
    os.flush();
  }
  if (mode == ProgressMode::Bar && barDrawn) {
    os << "\r\x1b[K";
    os.flush();
    barDrawn = false;
  }
  phase.clear();
}
