// The launch policy of cuda_kernels.cuh's launchers on a GPU (the stand-in has its own, which runs
// the grid on the host).
#pragma once

#include "cuda_kernels.cuh"

namespace collbench::cuda {

struct DeviceLaunch {
  template <typename... Params, typename... Args>
  static cudaError_t start(void (*kernel)(Params...), unsigned grid, cudaStream_t stream,
                           Args... args) {
    kernel<<<grid, kThreads, 0, stream>>>(args...);
    return cudaGetLastError();
  }
};

}  // namespace collbench::cuda
