// Launchers of the fill, poison and verify kernels (cuda_kernels.cuh; cuda_fill.cu,
// cuda_verify.cu). Internal to kernels/.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "collbench/pattern_spec.h"

namespace collbench::cuda {

/// Verification counters the kernel accumulates in device memory.
struct VerifyCounters {
  unsigned long long wrong;  ///< mismatching elements
  unsigned long long first;  ///< smallest mismatching index (~0 when none)
};

/// Each returns the launch error (cudaSuccess when the kernel was queued on `stream`).
/// `blocks_cap` bounds the grid (a few waves of the GPU's SMs; grid-stride loops cover the rest).
cudaError_t launch_fill(void* destination, const FillSpec& spec, cudaStream_t stream,
                        int blocks_cap);
cudaError_t launch_poison(void* destination, DType dtype, std::uint64_t count, cudaStream_t stream,
                          int blocks_cap);
cudaError_t launch_verify(const void* data, const VerifySpec& spec, VerifyCounters* counters,
                          cudaStream_t stream, int blocks_cap);

}  // namespace collbench::cuda
