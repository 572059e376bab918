// GPU memory as a Device: buffers in device memory, pattern fill/poison/verify kernels built on
// pattern.h, CUDA-event timers and CUDA-graph capture, all on one CUDA stream that the NCCL
// backend submits its operations to as well. This header is CUDA-free (the stream is an opaque
// pointer) so that code outside kernels/ can use the device without CUDA headers.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "collbench/device.h"

struct CUstream_st;  // cudaStream_t is CUstream_st*

namespace collbench {

/// What the CUDA runtime says about the GPUs this process can see.
struct CudaProbe {
  int device_count = 0;
  std::string error;  ///< why no GPU is usable (empty when the query succeeded)
};

/// Queries the CUDA runtime (cudaGetDeviceCount). Never throws. Without a driver the count is 0
/// and `error` names cudaErrorInsufficientDriver.
CudaProbe probe_cuda();

/// "13.0" for 13000 (the encoding of cudaRuntimeGetVersion and cudaDriverGetVersion).
std::string format_cuda_version(int version);
/// The kernel driver version from the text of /proc/driver/nvidia/version ("580.159"), or "".
std::string parse_nvidia_driver_version(std::string_view proc_text);

/// Alternative allocation functions (e.g. ncclMemAlloc when buffers are registered with NCCL).
struct CudaAllocator {
  std::function<void*(std::size_t bytes)> allocate;
  std::function<void(void* pointer)> release;
};

class CudaDevice : public Device {
 public:
  /// The stream every fill, poison, verify, timer record and graph capture of this device uses.
  virtual CUstream_st* stream() const = 0;
  virtual int ordinal() const = 0;
  /// Compute capability as major * 10 + minor (90 for Hopper).
  virtual int compute_capability() const = 0;
  /// Theoretical peak memory bandwidth in GB/s (memory clock x bus width x 2), 0 when unknown.
  virtual double peak_memory_bandwidth_gbps() const = 0;
  /// Uses `allocator` for allocations made from now on (and its release for them).
  virtual void set_allocator(CudaAllocator allocator) = 0;
  /// Waits until the stream is idle, calling `poll` between checks (a backend's chance to see an
  /// asynchronous error or an abort request and throw). Throws Error(kRuntime) on CUDA errors.
  virtual void wait(const std::function<void()>& poll) = 0;
  /// Installs the poll used by the device's own waits (synchronize(), verify()).
  virtual void set_wait_poll(std::function<void()> poll) = 0;
};

/// A device on GPU `ordinal` (made current on the calling thread) with a fresh non-blocking
/// stream, or CUDA's legacy default stream when `null_stream` (nccl-tests -y 1; it cannot be
/// captured as a graph). Throws Error(kRuntime) naming the CUDA error when the GPU cannot be used.
std::unique_ptr<CudaDevice> make_cuda_device(int ordinal, bool null_stream = false);

/// Versions for the run context: "13.0" each, or "" when the runtime cannot tell.
std::string cuda_runtime_version();
std::string cuda_driver_version();

}  // namespace collbench
