// The verify launcher: cuda_kernels.cuh's, starting its kernel on the GPU.
#include "cuda_kernels.cuh"
#include "device_launch.cuh"

namespace collbench::cuda {

cudaError_t launch_verify(const void* data, const VerifySpec& spec, VerifyCounters* counters,
                          cudaStream_t stream, int blocks_cap) {
  return verify_with<DeviceLaunch>(data, spec, counters, stream, blocks_cap);
}

}  // namespace collbench::cuda
