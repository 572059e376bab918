// Progress of long operations (local runs, waiting for jobs): on a terminal one status line
// redrawn in place (runs done/total, percent, ETA, what is running), on a pipe plain lines.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>

namespace collbench::sweep {

class Progress {
 public:
  /// `total` runs of which `done` are already complete before this operation; `tty` chooses the
  /// redrawn status line (pass isatty(fileno(out))).
  Progress(std::FILE* out, bool tty, int total, int done);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// A run started (`what` names it).
  void start(const std::string& what);
  /// A run ended; `line` says how, and is printed on its own line in both modes.
  void finish(const std::string& line, bool counts_as_done = true);
  /// Counts set directly (for waiting on Slurm, where runs end on their own).
  void set_counts(int done, const std::string& activity);
  /// A line of its own (kept above the status line on a terminal).
  void print(const std::string& line);

  /// "1:05", "12:30", "1:02:03".
  static std::string format_duration(double seconds);
  /// The status line as it would be drawn now (exposed for tests).
  std::string status_line();

 private:
  void redraw_locked();
  void tick();

  std::FILE* out_;
  bool tty_;
  int total_;
  int done_;
  int done_here_ = 0;  ///< completed by this operation (for the ETA)
  std::string activity_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point activity_start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread ticker_;
};

}  // namespace collbench::sweep
