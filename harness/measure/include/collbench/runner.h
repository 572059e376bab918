// Runner: the measurement engine. For every test x dtype x op x size x placement it warms up,
// times, verifies, aggregates across ranks and hands one row per measurement to the reporter.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "collbench/backend.h"
#include "collbench/bootstrap.h"
#include "collbench/cli.h"
#include "collbench/collective.h"
#include "collbench/reporter.h"
#include "collbench/watchdog.h"

namespace collbench {

/// One iteration's worth of work, ready to be issued repeatedly. Exposed so the overhead
/// benchmark can drive exactly the loop the runner times.
struct IterationPlan {
  const CollectiveSpec* spec = nullptr;
  Layout layout;
  DType dtype = DType::kFloat;
  ReduceOp op = ReduceOp::kSum;
  int root = 0;
  Placement placement = Placement::kOutOfPlace;
  int rank = 0;
  int nranks = 1;
  PeerRole role;
  int window = 1;
  int agg = 1;  ///< operations issued per iteration, in one group when more than one (-m)
  const char* send = nullptr;  ///< input of iteration 0
  char* recv = nullptr;        ///< output of iteration 0
  /// Byte shift between consecutive iterations' buffers and how many distinct positions fit,
  /// so successive iterations touch different memory as nccl-tests does (no warm caches);
  /// --buffers fixed has one position.
  std::size_t shift_bytes = 0;
  std::size_t shift_steps = 1;
};

/// Issues iterations [first, first + count) back to back, each of plan.agg operations (grouped
/// when more than one); every operation uses the next buffer position. With `timer`, records slot
/// (slot_base + i + 1) after iteration i (slot_base is recorded by the caller before).
/// Each completed host-blocking operation is reported to `watchdog`.
void run_iterations(const IterationPlan& plan, Backend& backend, int first, int count, Timer* timer,
                    std::size_t slot_base, Watchdog* watchdog);

/// -z: times `units` units of `unit` one at a time, each complete before the next starts; unit
/// i lies between timer slots 2i and 2i+1. Mode 1 puts a barrier (untimed) before every unit, 3
/// one after it, 2 none. Returns the host seconds spent issuing the units. Exposed so the overhead
/// benchmark can drive exactly the loop the runner times.
double run_blocking(const IterationPlan& unit, Backend& backend, Bootstrap& boot, Timer& timer,
                    int mode, int units, Watchdog* watchdog);

class Runner {
 public:
  Runner(const Options& options, Bootstrap& bootstrap, Backend& backend, Reporter& reporter,
         Watchdog* watchdog, std::string run_id);

  /// Asks the run to end after the size in progress when `request` becomes true (a signal
  /// handler sets it); every rank stops at the same point and the totals say so.
  void stop_on(const std::atomic<bool>& request) { stop_request_ = &request; }

  /// Runs everything (-N cycles of it); returns the totals (identical on every rank).
  RunTotals run(const std::vector<const CollectiveSpec*>& tests);

 private:
  struct Impl;
  void run_test(Impl& impl, const CollectiveSpec& spec, const std::vector<std::uint64_t>& sizes);
  void report_memory(Impl& impl, const struct BufferNeeds& needs);
  const Options& options_;
  Bootstrap& bootstrap_;
  Backend& backend_;
  Reporter& reporter_;
  Watchdog* watchdog_;
  std::string run_id_;
  const std::atomic<bool>* stop_request_ = nullptr;
};

/// Point-to-point role of `rank` on `nranks` ranks under `mode`.
PeerRole peer_role(PairMode mode, int rank, int nranks);

}  // namespace collbench
