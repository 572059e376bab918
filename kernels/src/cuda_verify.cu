// Launcher of the verify kernel (cuda_kernels.cuh).
#include "cuda_kernels.cuh"

namespace collbench::cuda {
namespace {

template <DType T>
cudaError_t verify_as(const unsigned char* in, const VerifySpec& spec, VerifyCounters* counters,
                      cudaStream_t stream, int blocks_cap) {
  constexpr int es = bytes_of(T);
  const std::uint64_t head = head_elements(in, es, spec.count);
  const unsigned grid = grid_for(spec.count, es, blocks_cap);
  // A copy's expected values do not depend on the rank count (see cuda_kernels.cuh).
  const bool one_rank = spec.key.nranks == 1 || (!spec.key.reduction && !spec.reduced);
  // The largest pattern index must fit in 32 bits (see cuda_kernels.cuh).
  const std::uint64_t extent = spec.block == 0 ? spec.index_offset + spec.count : spec.count;
  const bool index32 = extent <= kIndex32Limit && spec.index_offset < kIndex32Limit;
  if (one_rank && index32) {
    verify_kernel<T, true><<<grid, kThreads, 0, stream>>>(in, head, spec, counters);
  } else {
    verify_kernel<T, false><<<grid, kThreads, 0, stream>>>(in, head, spec, counters);
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_verify(const void* data, const VerifySpec& spec, VerifyCounters* counters,
                          cudaStream_t stream, int blocks_cap) {
  if (spec.count == 0) return cudaSuccess;
  const auto* in = static_cast<const unsigned char*>(data);
  CB_DISPATCH(spec.key.dtype, verify_as, in, spec, counters, stream, blocks_cap);
}

}  // namespace collbench::cuda
