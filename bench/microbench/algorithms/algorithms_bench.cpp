// What recording NCCL's algorithm and protocol costs per collective call, on collbench's side:
//  - profiler: NCCL calls the plugin's startEvent with the call's Coll event (rank 0 records it,
//    the other ranks return at once);
//  - TUNING log: the capture reads one log line per call and parses it. NCCL's own cost of that
//    line (formatting it and writing it to the file, on the calling thread) comes on top and is
//    not measured here.
//
//   build/collbench-algorithms-bench [--benchmark_repetitions=5]
#include <benchmark/benchmark.h>

#include <string>

#include "nccl_profiler.h"
#include "nccl_profiler_abi.h"
#include "nccl_tuning.h"

namespace collbench::nccl {
namespace {

using profiler_abi::EventDescrV5;

EventDescrV5 all_reduce_event() {
  EventDescrV5 e{};
  e.type = profiler_abi::kColl;
  e.coll.func = "AllReduce";
  e.coll.count = 262144;
  e.coll.datatype = "ncclFloat32";
  e.coll.algorithm = "RING";
  e.coll.protocol = "LL128";
  e.coll.channels = 16;
  return e;
}

void profiler_event(benchmark::State& state, int rank) {
  auto& recorder = ProfilerRecorder::instance();
  recorder.set_recording(true);
  void* context = nullptr;
  int mask = 0;
  ncclProfiler_v5.init(&context, 1, &mask, "", 2, 16, rank, nullptr);
  EventDescrV5 event = all_reduce_event();
  void* handle = nullptr;
  std::size_t calls = 0;
  for (auto _ : state) {
    ncclProfiler_v5.start_event(context, &handle, &event);
    // A row's calls are taken once per size: keep the log as small as a row's.
    if (++calls % 1000 == 0) benchmark::DoNotOptimize(recorder.take());
  }
  ncclProfiler_v5.finalize(context);
  recorder.set_recording(false);
}

void BM_ProfilerEventRank0(benchmark::State& state) { profiler_event(state, 0); }
void BM_ProfilerEventOtherRank(benchmark::State& state) { profiler_event(state, 5); }

void BM_TuningLogLine(benchmark::State& state) {
  const std::string line =
      "node1:12345:12399 [0] NCCL INFO AllReduce: 1048576 Bytes -> Algo RING proto LL128 "
      "channel{Lo..Hi}={0..15}";
  TuningLog log;
  std::size_t calls = 0;
  for (auto _ : state) {
    log.add_line(line);
    if (++calls % 1000 == 0) log.clear();
  }
  benchmark::DoNotOptimize(log.lines());
}

BENCHMARK(BM_ProfilerEventRank0);
BENCHMARK(BM_ProfilerEventOtherRank);
BENCHMARK(BM_TuningLogLine);

}  // namespace
}  // namespace collbench::nccl

BENCHMARK_MAIN();
