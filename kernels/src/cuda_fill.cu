// The fill and poison launchers: cuda_kernels.cuh's, starting its kernels on the GPU.
#include "cuda_kernels.cuh"
#include "device_launch.cuh"

namespace collbench::cuda {

cudaError_t launch_fill(void* destination, const FillSpec& spec, cudaStream_t stream,
                        int blocks_cap) {
  return fill_with<DeviceLaunch>(destination, spec, stream, blocks_cap);
}

cudaError_t launch_poison(void* destination, DType dtype, std::uint64_t count, cudaStream_t stream,
                          int blocks_cap) {
  return poison_with<DeviceLaunch>(destination, dtype, count, stream, blocks_cap);
}

}  // namespace collbench::cuda
