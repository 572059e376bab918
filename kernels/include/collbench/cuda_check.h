// CUDA_CHECK: the one way CUDA runtime calls are checked. Throws Error(kRuntime) naming the file,
// line and call, with CUDA's error string and name. For code that calls CUDA itself (kernels/ and
// the NCCL backend); it includes the CUDA runtime header.
#pragma once

#include <cuda_runtime.h>

#include "collbench/error.h"

namespace collbench {

[[noreturn]] inline void cuda_fail(cudaError_t e, const char* call, const char* file, int line) {
  throw_runtime("{}:{}: {} failed: {} ({})", file, line, call, cudaGetErrorString(e),
                cudaGetErrorName(e));
}

}  // namespace collbench

#define CUDA_CHECK(call)                                                    \
  do {                                                                      \
    const cudaError_t collbench_cuda_rc = (call);                           \
    if (collbench_cuda_rc != cudaSuccess) {                                 \
      ::collbench::cuda_fail(collbench_cuda_rc, #call, __FILE__, __LINE__); \
    }                                                                       \
  } while (0)
