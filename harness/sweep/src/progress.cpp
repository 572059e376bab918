#include "collbench/sweep/progress.h"

#include <fmt/format.h>

#include <cmath>

namespace collbench::sweep {

using Clock = std::chrono::steady_clock;

Progress::Progress(std::FILE* out, bool tty, int total, int done)
    : out_(out),
      tty_(tty),
      total_(total),
      done_(done),
      start_(Clock::now()),
      activity_start_(start_) {
  // On a terminal a ticker redraws the line every second so that the elapsed time and the ETA
  // move while a long run is in progress.
  if (tty_) ticker_ = std::thread([this] { tick(); });
}

Progress::~Progress() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
    if (tty_) std::fputs("\r\x1b[K", out_);
    std::fflush(out_);
  }
  wake_.notify_all();
  if (ticker_.joinable()) ticker_.join();
}

std::string Progress::format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) seconds = 0;
  const long s = std::lround(seconds);
  if (s >= 3600) return fmt::format("{}:{:02d}:{:02d}", s / 3600, (s / 60) % 60, s % 60);
  return fmt::format("{}:{:02d}", s / 60, s % 60);
}

std::string Progress::status_line() {
  const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
  const int percent = total_ > 0 ? done_ * 100 / total_ : 100;
  std::string eta = "ETA --:--";
  if (done_here_ > 0 && done_ < total_) {
    eta = "ETA " + format_duration(elapsed / done_here_ * (total_ - done_));
  } else if (done_ >= total_) {
    eta = "done";
  }
  std::string line = fmt::format("[{}/{}] {:3d}% · {} · elapsed {}", done_, total_, percent, eta,
                                 format_duration(elapsed));
  if (!activity_.empty()) {
    line += fmt::format(
        " · {} ({})", activity_,
        format_duration(std::chrono::duration<double>(Clock::now() - activity_start_).count()));
  }
  return line;
}

void Progress::redraw_locked() {
  if (!tty_) return;
  std::fprintf(out_, "\r\x1b[K%s", status_line().c_str());
  std::fflush(out_);
}

void Progress::tick() {
  std::unique_lock lock(mutex_);
  while (!stop_) {
    wake_.wait_for(lock, std::chrono::seconds(1));
    if (!stop_) redraw_locked();
  }
}

void Progress::start(const std::string& what) {
  std::lock_guard lock(mutex_);
  activity_ = what;
  activity_start_ = Clock::now();
  if (tty_) {
    redraw_locked();
  } else {
    std::fprintf(out_, "[%d/%d] %s: started\n", done_ + 1, total_, what.c_str());
    std::fflush(out_);
  }
}

void Progress::finish(const std::string& line, bool counts_as_done) {
  std::lock_guard lock(mutex_);
  if (counts_as_done) {
    ++done_;
    ++done_here_;
  }
  activity_.clear();
  if (tty_) {
    std::fprintf(out_, "\r\x1b[K%s\n", line.c_str());
    redraw_locked();
  } else {
    const std::string eta = status_line();
    std::fprintf(out_, "%s\n", line.c_str());
    std::fprintf(out_, "%s\n", eta.c_str());
    std::fflush(out_);
  }
}

void Progress::set_counts(int done, const std::string& activity) {
  std::lock_guard lock(mutex_);
  const bool changed = done != done_ || activity != activity_;
  if (done > done_) done_here_ += done - done_;
  done_ = done;
  if (activity != activity_) activity_start_ = Clock::now();
  activity_ = activity;
  if (tty_) {
    redraw_locked();
  } else if (changed) {
    std::fprintf(out_, "%s\n", status_line().c_str());
    std::fflush(out_);
  }
}

void Progress::print(const std::string& line) {
  std::lock_guard lock(mutex_);
  if (tty_) {
    std::fprintf(out_, "\r\x1b[K%s\n", line.c_str());
    redraw_locked();
  } else {
    std::fprintf(out_, "%s\n", line.c_str());
    std::fflush(out_);
  }
}

}  // namespace collbench::sweep
