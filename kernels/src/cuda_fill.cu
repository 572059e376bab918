// Launchers of the fill and poison kernels (cuda_kernels.cuh).
#include "cuda_kernels.cuh"

namespace collbench::cuda {
namespace {

template <DType T>
cudaError_t fill_as(unsigned char* out, const FillSpec& spec, cudaStream_t stream, int blocks_cap) {
  constexpr int es = bytes_of(T);
  const std::uint64_t head = head_elements(out, es, spec.count);
  const unsigned grid = grid_for(spec.count, es, blocks_cap);
  // The input of a copy does not depend on the rank count (see cuda_kernels.cuh).
  const bool one_rank = spec.key.nranks == 1 || !spec.key.reduction;
  if (one_rank && spec.count <= kIndex32Limit) {
    fill_kernel<T, true><<<grid, kThreads, 0, stream>>>(out, spec.count, head, spec.key, spec.rank);
  } else {
    fill_kernel<T, false>
        <<<grid, kThreads, 0, stream>>>(out, spec.count, head, spec.key, spec.rank);
  }
  return cudaGetLastError();
}

template <DType T>
cudaError_t poison_as(unsigned char* out, std::uint64_t count, cudaStream_t stream,
                      int blocks_cap) {
  constexpr int es = bytes_of(T);
  const std::uint64_t head = head_elements(out, es, count);
  poison_kernel<T><<<grid_for(count, es, blocks_cap), kThreads, 0, stream>>>(out, count, head);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_fill(void* destination, const FillSpec& spec, cudaStream_t stream,
                        int blocks_cap) {
  if (spec.count == 0) return cudaSuccess;
  auto* out = static_cast<unsigned char*>(destination);
  CB_DISPATCH(spec.key.dtype, fill_as, out, spec, stream, blocks_cap);
}

cudaError_t launch_poison(void* destination, DType dtype, std::uint64_t count, cudaStream_t stream,
                          int blocks_cap) {
  if (count == 0) return cudaSuccess;
  auto* out = static_cast<unsigned char*>(destination);
  CB_DISPATCH(dtype, poison_as, out, count, stream, blocks_cap);
}

}  // namespace collbench::cuda
