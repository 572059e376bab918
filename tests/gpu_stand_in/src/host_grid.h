// What a CUDA kernel sees of its grid, for collbench's kernels (kernels/src/cuda_kernels.cuh)
// compiled as host C++: the built-in indices, one set per host thread, the two atomics the verify
// kernel uses, and run_grid, which runs every thread of a grid. The stand-in's launchers run the
// same kernels as a GPU does, thread by thread, so what they compute is tested without one.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <thread>
#include <vector>

namespace collbench::cuda {

// The built-ins: set by run_grid before it runs each thread of the grid.
inline thread_local uint3 threadIdx{};
inline thread_local uint3 blockIdx{};
inline thread_local dim3 blockDim{};
inline thread_local dim3 gridDim{};

// The grid's threads run on several host threads at once: these are atomic as on a GPU.
inline unsigned long long atomicAdd(unsigned long long* address, unsigned long long value) {
  return __atomic_fetch_add(address, value, __ATOMIC_RELAXED);
}

inline unsigned long long atomicMin(unsigned long long* address, unsigned long long value) {
  unsigned long long seen = __atomic_load_n(address, __ATOMIC_RELAXED);
  while (value < seen && !__atomic_compare_exchange_n(address, &seen, value, true, __ATOMIC_RELAXED,
                                                      __ATOMIC_RELAXED)) {
  }
  return seen;
}

/// Runs `kernel(args...)` once for every thread of a one-dimensional grid of `grid` blocks of
/// `threads` threads. The blocks are shared among the host's cores (up to 16) when there are
/// enough of them to pay for starting threads: a GPU fills a gigabyte in milliseconds, and the
/// stand-in's kernels should not take seconds where it can help it.
template <typename... Params, typename... Args>
void run_grid(void (*kernel)(Params...), unsigned grid, unsigned threads, Args... args) {
  constexpr unsigned kBlocksPerCore = 16;
  const auto blocks = [&](unsigned begin, unsigned end) {
    gridDim = dim3(grid);
    blockDim = dim3(threads);
    for (unsigned b = begin; b < end; ++b) {
      blockIdx = uint3{b, 0, 0};
      for (unsigned t = 0; t < threads; ++t) {
        threadIdx = uint3{t, 0, 0};
        kernel(args...);
      }
    }
  };
  const unsigned cores = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
  const unsigned workers = std::min(cores, grid / kBlocksPerCore);
  if (workers <= 1) {
    blocks(0, grid);
    return;
  }
  const unsigned chunk = (grid + workers - 1) / workers;
  std::vector<std::thread> pool;
  for (unsigned w = 1; w < workers && w * chunk < grid; ++w)
    pool.emplace_back(blocks, w * chunk, std::min(grid, (w + 1) * chunk));
  blocks(0, std::min(grid, chunk));
  for (auto& t : pool) t.join();
}

}  // namespace collbench::cuda
