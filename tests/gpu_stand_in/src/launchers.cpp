// The kernel launchers of kernels/src/cuda_kernels.h, run on the stand-in's stream workers with
// the pattern math the CUDA kernels and the host device share (collbench/pattern.h). The one
// seam between collbench's CUDA code and the stand-in: the real launchers start CUDA kernels.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "collbench/pattern.h"
#include "cuda_kernels.h"
#include "memory.h"
#include "runtime.h"

namespace collbench::cuda {
namespace {

using stand_in::Work;

constexpr std::size_t bytes_of(DType t) {
  switch (t) {
    case DType::kInt8:
    case DType::kUint8:
    case DType::kFp8E4M3:
    case DType::kFp8E5M2:
      return 1;
    case DType::kHalf:
    case DType::kBfloat16:
      return 2;
    case DType::kInt32:
    case DType::kUint32:
    case DType::kFloat:
      return 4;
    case DType::kInt64:
    case DType::kUint64:
    case DType::kDouble:
      return 8;
  }
  return 1;
}

/// Calls F<dtype>() with the dtype as a template argument, as the CUDA kernels are specialised:
/// pattern.h's per-dtype switches then fold away, which makes the host loops several times faster.
template <template <DType> class F, typename... Args>
void dispatch(DType t, Args&&... args) {
  switch (t) {
    case DType::kInt8:
      return F<DType::kInt8>::run(args...);
    case DType::kUint8:
      return F<DType::kUint8>::run(args...);
    case DType::kInt32:
      return F<DType::kInt32>::run(args...);
    case DType::kUint32:
      return F<DType::kUint32>::run(args...);
    case DType::kInt64:
      return F<DType::kInt64>::run(args...);
    case DType::kUint64:
      return F<DType::kUint64>::run(args...);
    case DType::kHalf:
      return F<DType::kHalf>::run(args...);
    case DType::kFloat:
      return F<DType::kFloat>::run(args...);
    case DType::kDouble:
      return F<DType::kDouble>::run(args...);
    case DType::kBfloat16:
      return F<DType::kBfloat16>::run(args...);
    case DType::kFp8E4M3:
      return F<DType::kFp8E4M3>::run(args...);
    case DType::kFp8E5M2:
      return F<DType::kFp8E5M2>::run(args...);
  }
}

/// Runs `body(begin, end)` over [0, count) in chunks on the host's cores, as a grid's blocks
/// share the elements: a GPU fills a gigabyte in milliseconds, and the stand-in's kernels should
/// not take seconds where it can help it.
template <typename Body>
void parallel_for(std::uint64_t count, Body body) {
  constexpr std::uint64_t kSerial = std::uint64_t{1} << 22;
  const unsigned cores = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
  if (count < kSerial || cores == 1) {
    body(std::uint64_t{0}, count);
    return;
  }
  const std::uint64_t chunk = (count + cores - 1) / cores;
  std::vector<std::thread> threads;
  for (unsigned c = 1; c < cores && c * chunk < count; ++c) {
    threads.emplace_back(body, c * chunk, std::min(count, (c + 1) * chunk));
  }
  body(std::uint64_t{0}, std::min(count, chunk));
  for (auto& t : threads) t.join();
}

// The key is a const local in each loop: the stores of 1-byte types alias everything, and the
// compiler must know that they cannot change the key it switches on.
template <DType T>
struct Fill {
  static void run(unsigned char* out, const FillSpec& spec) {
    PatternKey k = spec.key;
    k.dtype = T;
    const PatternKey key = k;
    const int rank = spec.rank;
    parallel_for(spec.count, [out, key, rank](std::uint64_t begin, std::uint64_t end) {
      for (std::uint64_t i = begin; i < end; ++i) {
        pattern::store(out, i, T, pattern::input_value(key, rank, i));
      }
    });
  }
};

template <DType T>
struct Poison {
  static void run(unsigned char* out, std::uint64_t count) {
    parallel_for(count, [out](std::uint64_t begin, std::uint64_t end) {
      for (std::uint64_t i = begin; i < end; ++i) pattern::store_poison(out, i, T);
    });
  }
};

template <DType T>
struct Verify {
  static void run(const unsigned char* in, const VerifySpec& s, unsigned long long* wrong,
                  unsigned long long* first) {
    VerifySpec v = s;
    v.key.dtype = T;
    const VerifySpec spec = v;
    std::mutex mutex;
    parallel_for(spec.count, [&, in, spec](std::uint64_t begin, std::uint64_t end) {
      unsigned long long mine = 0, my_first = ~0ull;
      for (std::uint64_t j = begin; j < end; ++j) {
        double tolerance = 0;
        const double expected = pattern::expected_value(spec, j, &tolerance);
        if (!pattern::matches(pattern::load(in, j, T), expected, tolerance)) {
          if (mine == 0) my_first = j;
          ++mine;
        }
      }
      const std::lock_guard lock(mutex);
      *wrong += mine;
      if (my_first < *first) *first = my_first;
    });
  }
};

/// The writable view of a kernel's buffer, or nullptr after recording the illegal address a GPU
/// would fault on: the range must lie in one allocation of the stream's device.
unsigned char* kernel_buffer(const void* pointer, std::size_t bytes, int device,
                             const char* kernel) {
  stand_in::Allocation alloc;
  if (!stand_in::is_device_range(pointer, bytes, &alloc) || alloc.device != device) {
    stand_in::set_sticky_error(
        device, cudaErrorIllegalAddress,
        fmt::format("the {} kernel on GPU {} accessed {} bytes at {}: {}", kernel, device, bytes,
                    pointer, stand_in::describe(pointer)));
    return nullptr;
  }
  return stand_in::worker_view(pointer);
}

/// Queues a kernel as CUDA does: refused at once for a bad stream or grid, else it runs later.
cudaError_t launch(cudaStream_t stream, int blocks_cap, Work work) {
  if (blocks_cap < 1) return stand_in::record(cudaErrorInvalidConfiguration);
  const cudaError_t e = stand_in::submit(stream, std::move(work), true);
  if (e != cudaSuccess) return stand_in::record(e);
  // The launchers return cudaGetLastError(), which also reports an earlier unchecked error.
  return cudaGetLastError();
}

int device_of(cudaStream_t stream) {
  int device = 0;
  return stand_in::stream_device(stream, &device) == cudaSuccess ? device : -1;
}

}  // namespace

cudaError_t launch_fill(void* destination, const FillSpec& spec, cudaStream_t stream,
                        int blocks_cap) {
  if (spec.count == 0) return cudaSuccess;
  const int device = device_of(stream);
  return launch(stream, blocks_cap,
                Work{"the fill kernel",
                     [destination, spec, device] {
                       unsigned char* out = kernel_buffer(
                           destination, spec.count * bytes_of(spec.key.dtype), device, "fill");
                       if (out) dispatch<Fill>(spec.key.dtype, out, spec);
                     },
                     nullptr});
}

cudaError_t launch_poison(void* destination, DType dtype, std::uint64_t count, cudaStream_t stream,
                          int blocks_cap) {
  if (count == 0) return cudaSuccess;
  const int device = device_of(stream);
  return launch(stream, blocks_cap,
                Work{"the poison kernel",
                     [destination, dtype, count, device] {
                       unsigned char* out =
                           kernel_buffer(destination, count * bytes_of(dtype), device, "poison");
                       if (out) dispatch<Poison>(dtype, out, count);
                     },
                     nullptr});
}

cudaError_t launch_verify(const void* data, const VerifySpec& spec, VerifyCounters* counters,
                          cudaStream_t stream, int blocks_cap) {
  if (spec.count == 0) return cudaSuccess;
  const int device = device_of(stream);
  return launch(stream, blocks_cap,
                Work{"the verify kernel",
                     [data, spec, counters, device] {
                       const unsigned char* in = kernel_buffer(
                           data, spec.count * bytes_of(spec.key.dtype), device, "verify");
                       auto* out = reinterpret_cast<VerifyCounters*>(
                           kernel_buffer(counters, sizeof(VerifyCounters), device, "verify"));
                       if (!in || !out) return;
                       unsigned long long wrong = 0, first = ~0ull;
                       dispatch<Verify>(spec.key.dtype, in, spec, &wrong, &first);
                       // The kernel's atomicAdd and atomicMin.
                       if (wrong) {
                         __atomic_fetch_add(&out->wrong, wrong, __ATOMIC_RELAXED);
                         unsigned long long seen = __atomic_load_n(&out->first, __ATOMIC_RELAXED);
                         while (first < seen &&
                                !__atomic_compare_exchange_n(&out->first, &seen, first, true,
                                                             __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
                         }
                       }
                     },
                     nullptr});
}

}  // namespace collbench::cuda
