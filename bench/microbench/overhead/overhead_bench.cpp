// The same MPI_Allreduce calls, timed two ways on 2 ranks: a bare loop, and collbench's own timed
// loop (collective spec -> MPI backend, watchdog progress, timer records around the batch:
// exactly what the runner executes for the headline time). Prints the ratio at 8 B and 1 MiB;
// collbench must stay within 1.05.
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

#include "backends/mpi/mpi_backend.h"
#include "backends/mpi/mpi_bootstrap.h"
#include "collbench/runner.h"
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

/// Every benchmark iteration is one batch of operations, so both variants amortise the same way.
void bare_loop(benchmark::State& state) {
  const std::size_t count = static_cast<std::size_t>(state.range(0)) / sizeof(float);
  std::vector<float> send(count, 1.0f), recv(count);
  MPI_Comm comm = mpi_data_communicator(*fixture.bootstrap);
  fixture.bootstrap->barrier();
  for (auto _ : state) {
    for (int i = 0; i < fixture.batch; ++i) {
      MPI_Allreduce(send.data(), recv.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM, comm);
    }
  }
  state.SetItemsProcessed(state.iterations() * fixture.batch);
}

void collbench_loop(benchmark::State& state) {
  const std::size_t bytes = static_cast<std::size_t>(state.range(0));
  Device& device = fixture.backend->device();
  DeviceBuffer send(device, bytes), recv(device, bytes);
  IterationPlan plan;
  plan.spec = &all_reduce_spec();
  plan.layout = plan.spec->layout(bytes / sizeof(float), fixture.bootstrap->size(), sizeof(float));
  plan.rank = fixture.bootstrap->rank();
  plan.nranks = fixture.bootstrap->size();
  plan.send = send.at(0);
  plan.recv = recv.at(0);
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

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

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
  auto backend = make_mpi_backend(Options{}, BackendArgs{}, *bootstrap);
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
  for (int r = 0; r < rounds; ++r) {
    for (const auto& [bytes, iterations] : sizes) {
      benchmark::RegisterBenchmark("bare_mpi_allreduce", bare_loop)
          ->Arg(bytes)
          ->Iterations(iterations)
          ->UseRealTime();
      benchmark::RegisterBenchmark("collbench_all_reduce", collbench_loop)
          ->Arg(bytes)
          ->Iterations(iterations)
          ->UseRealTime();
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
    std::printf("%10s  %14s  %14s  %7s\n", "size", "bare (us/op)", "collbench", "ratio");
    for (const auto& [bytes, iterations] : sizes) {
      const double bare = median(collector.times["bare_mpi_allreduce/" + std::to_string(bytes)]);
      const double ours = median(collector.times["collbench_all_reduce/" + std::to_string(bytes)]);
      const double ratio = ours / bare;
      std::printf("%10ld  %14.3f  %14.3f  %7.3f\n", bytes, bare, ours, ratio);
      if (ratio > 1.05) status = 1;
    }
    std::printf("verdict: %s\n", status == 0 ? "within 1.05" : "ABOVE 1.05");
  }
  return static_cast<int>(bootstrap->allreduce(status, ScalarOp::kMax));
}
