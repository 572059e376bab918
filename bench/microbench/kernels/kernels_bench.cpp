// Bandwidth of the GPU fill, poison and verify kernels on a 1 GiB buffer (Google Benchmark).
// Each iteration is timed with CUDA events around one kernel; the counters report GB/s
// (1e9 bytes/s) and the fraction of the GPU's theoretical peak memory bandwidth. Poison writes a
// constant and is the achievable-write reference for the pattern kernels.
//
//   collbench-kernels-bench [--benchmark_filter=...] [--size=BYTES]   (COLLBENCH_DEVICE picks the
//   GPU)
//
// Without a usable GPU it prints one SKIPPED line and exits 0.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "collbench/cuda_device.h"
#include "collbench/error.h"
#include "collbench/types.h"

namespace {

using namespace collbench;

std::size_t g_bytes = std::size_t{1} << 30;

struct Shared {
  std::unique_ptr<CudaDevice> device;
  DeviceBuffer buffer;
  std::unique_ptr<Timer> timer;
};

Shared& shared() {
  static Shared s;
  return s;
}

PatternKey key_for(DType dtype, bool reduction, int nranks) {
  PatternKey key;
  key.dtype = dtype;
  key.op = ReduceOp::kSum;
  key.reduction = reduction;
  key.seed = 12345;
  key.nranks = nranks;
  return key;
}

void report(benchmark::State& state, double seconds_total, std::int64_t bytes_per_iteration) {
  const double gbps = static_cast<double>(bytes_per_iteration) *
                      static_cast<double>(state.iterations()) / seconds_total / 1e9;
  state.counters["GB/s"] = gbps;
  const double peak = shared().device->peak_memory_bandwidth_gbps();
  if (peak > 0) state.counters["peak_fraction"] = gbps / peak;
  state.SetBytesProcessed(bytes_per_iteration * static_cast<std::int64_t>(state.iterations()));
}

/// Times `work` (which queues one kernel) with CUDA events, as manual time.
template <typename Work>
void run_timed(benchmark::State& state, Work&& work) {
  Shared& s = shared();
  double total = 0;
  for (auto _ : state) {
    s.timer->record(0);
    work();
    s.timer->record(1);
    s.timer->synchronize();
    const double seconds = s.timer->seconds(0, 1);
    total += seconds;
    state.SetIterationTime(seconds);
  }
  report(state, total, static_cast<std::int64_t>(g_bytes));
}

void bm_fill(benchmark::State& state, DType dtype, bool reduction, int nranks) {
  Shared& s = shared();
  const FillSpec spec{key_for(dtype, reduction, nranks), 0, g_bytes / size_of(dtype)};
  run_timed(state, [&] { s.device->fill(s.buffer.data(), spec); });
}

void bm_poison(benchmark::State& state, DType dtype) {
  Shared& s = shared();
  run_timed(state, [&] { s.device->poison(s.buffer.data(), dtype, g_bytes / size_of(dtype)); });
}

/// Verification of a buffer that holds the expected values (`reduced`: a one-rank all-reduce
/// result, else a copy of rank 0's input), or, with `poisoned`, of a buffer where every element
/// is wrong (the worst case: every thread counts mismatches) against an 8-rank reduction.
void bm_verify(benchmark::State& state, DType dtype, bool reduced, bool poisoned) {
  Shared& s = shared();
  const std::size_t count = g_bytes / size_of(dtype);
  const int nranks = poisoned ? 8 : 1;
  const PatternKey key = key_for(dtype, reduced, nranks);
  VerifySpec spec;
  spec.key = key;
  spec.count = count;
  spec.reduced = reduced;
  if (poisoned)
    s.device->poison(s.buffer.data(), dtype, count);
  else
    s.device->fill(s.buffer.data(), FillSpec{key, 0, count});
  s.device->synchronize();
  const VerifyResult check = s.device->verify(s.buffer.data(), spec);
  if (check.wrong != (poisoned ? count : 0)) {
    state.SkipWithError(poisoned
                            ? "verify did not flag every poisoned element"
                            : "verify found mismatches in a buffer holding the expected values");
    return;
  }
  // verify() waits for its result, so the events span the kernel plus the read-back of two
  // counters (a few microseconds on a 1 GiB buffer).
  run_timed(state,
            [&] { benchmark::DoNotOptimize(s.device->verify(s.buffer.data(), spec).wrong); });
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--size=", 7) == 0) g_bytes = std::strtoull(argv[i] + 7, nullptr, 10);
  }
  benchmark::Initialize(&argc, argv);
  const CudaProbe probe = probe_cuda();
  if (probe.device_count <= 0) {
    std::printf("collbench-kernels-bench: SKIPPED: no usable GPU (%s)\n", probe.error.c_str());
    return 0;
  }
  int ordinal = 0;
  if (const char* env = std::getenv("COLLBENCH_DEVICE")) ordinal = std::atoi(env);
  try {
    Shared& s = shared();
    s.device = make_cuda_device(ordinal);
    s.buffer = DeviceBuffer(*s.device, g_bytes);
    s.timer = s.device->make_timer(2);
    const DeviceInfo info = s.device->info();
    std::printf("GPU %d: %s, peak memory bandwidth %.0f GB/s, buffer %zu bytes\n", ordinal,
                info.model.c_str(), s.device->peak_memory_bandwidth_gbps(), g_bytes);
  } catch (const Error& e) {
    std::fprintf(stderr, "collbench-kernels-bench: %s\n", e.what());
    return 3;
  }

  const DType dtypes[] = {DType::kFloat,   DType::kBfloat16, DType::kHalf,
                          DType::kFp8E4M3, DType::kDouble,   DType::kInt8};
  for (DType t : dtypes) {
    const std::string n(name(t));
    benchmark::RegisterBenchmark(("poison/" + n).c_str(), bm_poison, t)
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("fill/" + n).c_str(), bm_fill, t, false, 1)
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("fill_reduce8/" + n).c_str(), bm_fill, t, true, 8)
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("verify/" + n).c_str(), bm_verify, t, false, false)
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("verify_reduced/" + n).c_str(), bm_verify, t, true, false)
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("verify_reduce8_allwrong/" + n).c_str(), bm_verify, t, true, true)
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  shared().buffer = DeviceBuffer();
  shared().timer.reset();
  shared().device.reset();
  return 0;
}
