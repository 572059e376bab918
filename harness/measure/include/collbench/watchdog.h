// Watchdog: turns a hang into a report and an exit. A thread per rank watches the runner's
// progress; when an operation has not completed within the timeout, the rank asks every other
// rank (over a small TCP side channel, independent of the library under test, which is stuck)
// what it is doing, reports which test and size hung and which ranks had not arrived, and
// aborts the job with exit code 3.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "collbench/bootstrap.h"

namespace collbench {

class Watchdog {
 public:
  /// Called on the watchdog thread after the report (one or two lines) was printed to stderr;
  /// must end the process (abort the backend, then the job).
  using FireHandler = std::function<void(const std::string& report)>;
  /// What the library knows of the hang (NCCL: the rank behind, from its RAS service), asked on
  /// the watchdog thread after its own report and before this rank says it has reported: a peer
  /// ends (and leaves the library's account) only once every rank that waited with it has
  /// reported, so no rank asks the library about peers that already left. nullopt: nothing to
  /// add. The line is printed to stderr and appended to the report the fire handler gets.
  using Diagnosis = std::function<std::optional<std::string>()>;

  /// Collective: exchanges side-channel endpoints through `bootstrap`. timeout_s <= 0 disables
  /// firing (the side channel still answers peers).
  Watchdog(Bootstrap& bootstrap, double timeout_s, FireHandler on_fire, Diagnosis diagnose = {});
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  /// Starts a phase: every rank passes through the same phases in the same order. While armed,
  /// the watchdog fires when no progress() arrived for timeout * ops_per_wait seconds
  /// (ops_per_wait: how many operations one blocking wait covers, e.g. a whole batch on a
  /// stream-ordered backend).
  void arm(const std::string& what, int ops_per_wait);
  /// One operation (or wait) completed. Called only by the thread that runs the benchmark, so a
  /// relaxed load and store suffice (no locked read-modify-write in the timed loop).
  void progress() noexcept {
    progress_.store(progress_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  }
  /// Leaves the phase (time spent in control-plane work is not watched).
  void disarm();

  /// Builds the report the watchdog would print now (used by the fire path and by tests).
  std::string describe_hang();

 private:
  struct State;
  struct Hang;
  void run();
  /// answer_peers: answer this rank's queries while asking (false: the answering thread does).
  Hang collect_hang(bool answer_peers);
  std::atomic<std::uint64_t> progress_{0};
  std::unique_ptr<State> state_;
};

}  // namespace collbench
