// The same MPI_Allreduce calls, timed two ways on 2 ranks, for both of collbench's timing modes:
//  - batch (the headline time): a bare loop of back-to-back calls, and collbench's own timed loop
//    (collective spec -> MPI backend, watchdog progress, timer records around the batch);
//  - blocking (-z 1, OSU's way): OSU's loop (MPI_Wtime around each call, a barrier between calls),
//    and collbench's run_blocking, exactly as the runner executes it.
// Prints the ratio per mode at 8 B and 1 MiB; collbench must stay within 1.05.
//
//   mpirun -np 2 build/collbench-overhead [--rounds 9] [--batch 2000]
#include <benchmark/benchmark.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "backends/catalog.h"
#include "backends/mpi/mpi_backend.h"
#include "backends/mpi/mpi_bootstrap.h"
#include "collbench/runner.h"
#include "collbench/stats.h"
#include "collectives/collectives.h"

namespace collbench {
namespace {

struct Fixture {
  Bootstrap* bootstrap = nullptr;
  Backend* backend = nullptr;
  Watchdog* watchdog = nullptr;
  int batch = 1000;  ///< operations per benchmark iteration
};
Fixture fixture;

/// One float sum MPI_Allreduce of a size on the backend's own buffers, as collbench's loop uses:
/// the reference loops and collbench's differ in nothing else.
class BareAllreduce {
 public:
  explicit BareAllreduce(std::size_t bytes)
      : send_(fixture.backend->device(), bytes),
        recv_(fixture.backend->device(), bytes),
        count_(static_cast<int>(bytes / sizeof(float))),
        comm_(mpi_data_communicator(*fixture.bootstrap)) {}
  MPI_Comm comm() const { return comm_; }
  void operator()() const {
    MPI_Allreduce(send_.at(0), recv_.at(0), count_, MPI_FLOAT, MPI_SUM, comm_);
  }

 private:
  DeviceBuffer send_, recv_;
  int count_;
  MPI_Comm comm_;
};

/// Every benchmark iteration is one batch of operations, so both variants amortise the same way.
void bare_loop(benchmark::State& state) {
  const BareAllreduce call(static_cast<std::size_t>(state.range(0)));
  fixture.bootstrap->barrier();
  for (auto _ : state) {
    for (int i = 0; i < fixture.batch; ++i) {
      call();
    }
  }
  state.SetItemsProcessed(state.iterations() * fixture.batch);
}

/// A float sum all_reduce of `bytes` over the backend's buffers, as the runner plans one.
IterationPlan all_reduce_plan(std::size_t bytes, const DeviceBuffer& send,
                              const DeviceBuffer& recv) {
  IterationPlan plan;
  plan.spec = &all_reduce_spec();
  plan.layout = plan.spec->layout(bytes / sizeof(float), fixture.bootstrap->size(), sizeof(float));
  plan.rank = fixture.bootstrap->rank();
  plan.nranks = fixture.bootstrap->size();
  plan.send = send.at(0);
  plan.recv = recv.at(0);
  return plan;
}

void collbench_loop(benchmark::State& state) {
  const std::size_t bytes = static_cast<std::size_t>(state.range(0));
  Device& device = fixture.backend->device();
  DeviceBuffer send(device, bytes), recv(device, bytes);
  const IterationPlan plan = all_reduce_plan(bytes, send, recv);
  const auto timer = device.make_timer(2);
  fixture.watchdog->arm("overhead benchmark", 1);
  fixture.bootstrap->barrier();
  for (auto _ : state) {
    // The runner's headline batch: records around it, none inside.
    timer->record(0);
    run_iterations(plan, *fixture.backend, 0, fixture.batch, nullptr, 0, fixture.watchdog);
    timer->record(1);
  }
  fixture.watchdog->disarm();
  state.SetItemsProcessed(state.iterations() * fixture.batch);
}

/// OSU's collective loop (osu_allreduce): the clock around one call, then a barrier. The benchmark
/// time is wall time; the reported figure is the sum of the timed intervals, as OSU reports it.
void osu_style_loop(benchmark::State& state) {
  const BareAllreduce call(static_cast<std::size_t>(state.range(0)));
  fixture.bootstrap->barrier();
  for (auto _ : state) {
    double timed = 0;
    for (int i = 0; i < fixture.batch; ++i) {
      const double start = MPI_Wtime();
      call();
      timed += MPI_Wtime() - start;
      MPI_Barrier(call.comm());
    }
    state.SetIterationTime(timed);
  }
  state.SetItemsProcessed(state.iterations() * fixture.batch);
}

/// collbench -z 1: the runner's run_blocking, the timed intervals summed as the runner does.
void collbench_blocking_loop(benchmark::State& state) {
  const std::size_t bytes = static_cast<std::size_t>(state.range(0));
  Device& device = fixture.backend->device();
  DeviceBuffer send(device, bytes), recv(device, bytes);
  const IterationPlan plan = all_reduce_plan(bytes, send, recv);
  const auto timer = device.make_timer(2 * static_cast<std::size_t>(fixture.batch));
  fixture.watchdog->arm("overhead benchmark", 1);
  fixture.bootstrap->barrier();
  for (auto _ : state) {
    run_blocking(plan, *fixture.backend, *fixture.bootstrap, *timer, 1, fixture.batch,
                 fixture.watchdog);
    double timed = 0;
    for (std::size_t i = 0; i < static_cast<std::size_t>(fixture.batch); ++i) {
      timed += timer->seconds(2 * i, 2 * i + 1);
    }
    state.SetIterationTime(timed);
  }
  fixture.watchdog->disarm();
  state.SetItemsProcessed(state.iterations() * fixture.batch);
}

/// Collects each run's time per operation; prints nothing itself.
class Collector : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& run : runs) {
      const double per_op_us = run.GetAdjustedRealTime() / fixture.batch * 1e-3;  // ns -> us
      times[run.run_name.function_name + "/" + run.run_name.args].push_back(per_op_us);
    }
  }
  std::map<std::string, std::vector<double>> times;
};

}  // namespace
}  // namespace collbench

int main(int argc, char** argv) {
  using namespace collbench;
  int rounds = 9;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--rounds") == 0) rounds = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--batch") == 0) fixture.batch = std::atoi(argv[i + 1]);
  }
  auto bootstrap = make_mpi_bootstrap(&argc, &argv);
  auto backend = make_mpi_backend(
      Options{}, backend_args(Options{}, mpi_backend_descriptor(), backend_catalog()), *bootstrap);
  Watchdog watchdog(*bootstrap, 60, [&](const std::string& why) { bootstrap->abort(3, why); });
  fixture = Fixture{bootstrap.get(), backend.get(), &watchdog, fixture.batch};
  if (bootstrap->size() != 2 && bootstrap->rank() == 0) {
    std::fprintf(stderr, "note: the reference setting is 2 ranks (mpirun -np 2); running on %d\n",
                 bootstrap->size());
  }

  // Alternate the two variants round by round (same order on every rank: MPI needs it) so
  // that drift in the machine's speed affects both alike. Fixed iteration counts keep the
  // ranks in step.
  const std::vector<std::pair<long, int>> sizes{{8, 200}, {1 << 20, 4}};
  // Each mode: the reference loop, then collbench's; the blocking pair reports the timed
  // intervals only (the barriers between calls are not part of either tool's figure).
  struct Pair {
    const char* mode;
    const char* reference;
    void (*reference_loop)(benchmark::State&);
    const char* ours;
    void (*our_loop)(benchmark::State&);
    bool manual_time;
  };
  const std::vector<Pair> pairs{
      {"batch", "bare_mpi_allreduce", bare_loop, "collbench_all_reduce", collbench_loop, false},
      {"blocking (-z 1)", "osu_style_allreduce", osu_style_loop, "collbench_blocking",
       collbench_blocking_loop, true},
  };
  for (int r = 0; r < rounds; ++r) {
    for (const auto& [bytes, iterations] : sizes) {
      for (const Pair& pair : pairs) {
        // The blocking loops run one batch per iteration at most as long as a batch of 200
        // 8-byte operations; at 1 MiB they are as long as the batch loops.
        for (const auto& [name, loop] : {std::pair{pair.reference, pair.reference_loop},
                                         std::pair{pair.ours, pair.our_loop}}) {
          auto* b = benchmark::RegisterBenchmark(name, loop)->Arg(bytes)->Iterations(iterations);
          if (pair.manual_time) {
            b->UseManualTime();
          } else {
            b->UseRealTime();
          }
        }
      }
    }
  }
  benchmark::Initialize(&argc, argv);
  Collector collector;
  benchmark::RunSpecifiedBenchmarks(&collector);

  int status = 0;
  if (bootstrap->rank() == 0) {
    std::printf(
        "collbench measurement loop vs bare MPI_Allreduce, %d ranks, float sum, median of %d "
        "rounds of "
        "%d operations\n",
        bootstrap->size(), rounds, fixture.batch);
    std::printf("%-16s  %10s  %16s  %14s  %7s\n", "mode", "size", "reference (us/op)", "collbench",
                "ratio");
    for (const Pair& pair : pairs) {
      for (const auto& [bytes, iterations] : sizes) {
        const std::string arg = std::to_string(bytes);
        const double reference = median(collector.times[std::string(pair.reference) + '/' + arg]);
        const double ours = median(collector.times[std::string(pair.ours) + '/' + arg]);
        const double ratio = ours / reference;
        std::printf("%-16s  %10ld  %16.3f  %14.3f  %7.3f\n", pair.mode, bytes, reference, ours,
                    ratio);
        if (ratio > 1.05) status = 1;
      }
    }
    std::printf("verdict: %s\n", status == 0 ? "within 1.05" : "ABOVE 1.05");
  }
  return static_cast<int>(bootstrap->allreduce(status, ScalarOp::kMax));
}
