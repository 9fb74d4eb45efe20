//===- Progress.h - compile progress display -----------------------*- C++ -*-===//
//
// kiln-compile shows the phases that take more than a moment (import of a
// large model, NVRTC, weight packing, writing the file): on a terminal as one
// status line redrawn in place, elsewhere (a log, a pipe, CI) as plain lines
// when a phase starts to take long and when it ends. The compiler driver
// reports phases and counts; this class decides what reaches the stream.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_DRIVER_PROGRESS_H
#define KILN_COMPILER_DRIVER_PROGRESS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

namespace kiln {

/// How progress is shown.
enum class ProgressMode {
  None,  ///< nothing (--quiet, --progress=none)
  Lines, ///< plain lines: "<tool>: <phase>: ..." (default when stderr is not a terminal)
  Bar,   ///< one line redrawn with '\r' (default on a terminal)
};

/// Shows the progress of named phases on a stream (kiln-compile: stderr).
/// A phase is shown only once it has run `delayMs` milliseconds (checked at
/// each update and at its end), so fast compiles print nothing:
///   - Lines: "<tool>: <phase>..." when the delay has passed, then at most
///     one line per tenth of the work ("<tool>: <phase>: 3 of 8 modules"),
///     and "<tool>: <phase> done in 12.3 s" at the end;
///   - Bar: "[#####     ] <phase> 3 of 8 modules, 12.3 s" redrawn in place
///     (at most 10 times a second) and erased at the end of the phase, so
///     that the summary after it starts on a clean line.
/// Units: "bytes" counts are printed in MB, anything else as given.
/// A background thread (started unless the mode is None) wakes every 100 ms,
/// so that a phase without updates (passes on a large model) still shows
/// its start line, and the bar its running time.
/// update() may be called from several threads (NVRTC workers).
class ProgressReporter {
public:
  /// `tool` prefixes every line; `delayMs` >= 0.
  ProgressReporter(llvm::raw_ostream &os, ProgressMode mode, llvm::StringRef tool,
                   double delayMs);
  ~ProgressReporter();

  /// Starts phase `phase` (ends the previous one, if any).
  void begin(llvm::StringRef phase);
  /// `done` of `total` units of the current phase are finished.
  void update(uint64_t done, uint64_t total, llvm::StringRef unit);
  /// Ends the current phase (no-op without one). `completed` false: the
  /// phase failed; no "done" line is printed (the error follows).
  void end(bool completed = true);

  ProgressMode getMode() const { return mode; }

private:
  using Clock = std::chrono::steady_clock;
  double elapsedMs() const;
  std::string describeCount() const;
  void drawBar();
  /// Shows the current phase if it has run `delayMs` (caller holds `mutex`).
  void refresh();

  llvm::raw_ostream &os;
  ProgressMode mode;
  std::string tool;
  double delayMs;
  std::mutex mutex;
  std::string phase;        ///< empty: no phase running
  Clock::time_point start;  ///< of the current phase
  Clock::time_point lastDraw;
  bool shown = false;       ///< the current phase has printed something
  bool barDrawn = false;    ///< a bar is on the screen
  uint64_t done = 0, total = 0;
  std::string unit;
  int lastTenth = -1;       ///< Lines: the last tenth of the work printed
  bool stopping = false;
  std::condition_variable wake;
  std::thread ticker;
};

} // namespace kiln

#endif // KILN_COMPILER_DRIVER_PROGRESS_H
