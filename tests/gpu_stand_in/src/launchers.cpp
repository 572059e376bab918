// The kernel launchers of kernels/src/cuda_kernels.h: cuda_kernels.cuh's own launchers and
// kernels, compiled for the host, whose grids run on the stand-in's stream workers (host_grid.h).
// The one seam between collbench's CUDA code and the stand-in is how a kernel starts: here on the
// host, after the check a GPU makes of the addresses it touches.
#include <fmt/format.h>

#include <cstdint>

#include "cuda_kernels.cuh"
#include "host_grid.h"
#include "memory.h"
#include "runtime.h"

namespace collbench::cuda {
namespace {

using stand_in::Work;

/// The launch policy of cuda_kernels.cuh's launchers on the stand-in: the grid, at once, on the
/// calling thread (a stream worker, on buffers it has already checked and mapped).
struct HostLaunch {
  template <typename... Params, typename... Args>
  static cudaError_t start(void (*kernel)(Params...), unsigned grid, cudaStream_t /*stream*/,
                           Args... args) {
    run_grid(kernel, grid, kThreads, args...);
    return cudaSuccess;
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
                     [destination, spec, device, blocks_cap] {
                       unsigned char* out = kernel_buffer(
                           destination, spec.count * pattern::dtype_bytes(spec.key.dtype), device,
                           "fill");
                       if (out) fill_with<HostLaunch>(out, spec, nullptr, blocks_cap);
                     },
                     nullptr});
}

cudaError_t launch_poison(void* destination, DType dtype, std::uint64_t count, cudaStream_t stream,
                          int blocks_cap) {
  if (count == 0) return cudaSuccess;
  const int device = device_of(stream);
  return launch(stream, blocks_cap,
                Work{"the poison kernel",
                     [destination, dtype, count, device, blocks_cap] {
                       unsigned char* out = kernel_buffer(
                           destination, count * pattern::dtype_bytes(dtype), device, "poison");
                       if (out) poison_with<HostLaunch>(out, dtype, count, nullptr, blocks_cap);
                     },
                     nullptr});
}

cudaError_t launch_verify(const void* data, const VerifySpec& spec, VerifyCounters* counters,
                          cudaStream_t stream, int blocks_cap) {
  if (spec.count == 0) return cudaSuccess;
  const int device = device_of(stream);
  return launch(stream, blocks_cap,
                Work{"the verify kernel",
                     [data, spec, counters, device, blocks_cap] {
                       const unsigned char* in =
                           kernel_buffer(data, spec.count * pattern::dtype_bytes(spec.key.dtype),
                                         device, "verify");
                       auto* out = reinterpret_cast<VerifyCounters*>(
                           kernel_buffer(counters, sizeof(VerifyCounters), device, "verify"));
                       if (in && out) verify_with<HostLaunch>(in, spec, out, nullptr, blocks_cap);
                     },
                     nullptr});
}

}  // namespace collbench::cuda
