// The stand-in's CUDA runtime: devices, streams that run their work on a worker thread after a
// random small delay, events stamped when their stream reaches them, and graph capture that
// records work instead of running it. cuda_runtime_api.cpp exposes it as the CUDA runtime API;
// the kernel launchers (launchers.cpp) and NCCL (nccl_api.cpp) submit work through it.
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <string>

namespace collbench::stand_in {

/// One piece of stream work: a kernel, a copy, an NCCL operation, an event record.
struct Work {
  std::string what;  ///< for messages: "the fill kernel", "ncclAllReduce", ...
  /// Runs on the stream's worker, once per time the work is reached (each graph launch too).
  std::function<void()> run;
  /// Runs on the submitting thread when the work enters a stream's queue (each graph launch
  /// too): what the call itself does at once, e.g. leave a copy's destination undefined.
  std::function<void()> enqueued;
};

/// The calling thread's current device (cudaSetDevice).
int current_device();
int device_count();

/// Records `e` as the thread's last error when it is one, and returns it.
cudaError_t record(cudaError_t e);

/// A device's sticky error (an illegal address found by a kernel): once set, every call on
/// that device returns it, as a corrupted CUDA context does.
void set_sticky_error(int device, cudaError_t e, const std::string& why);
cudaError_t sticky_error(int device);

/// Checks a stream handle (nullptr: the current device's legacy default stream); on success
/// `device` receives the stream's device.
cudaError_t stream_device(cudaStream_t stream, int* device);
/// Whether `stream` is being captured into a graph.
bool stream_capturing(cudaStream_t stream);

/// Adds `work` to `stream` (or, while it is capturing, to its graph). `kernel`: a kernel launch,
/// refused on a stream of another device than the current one.
cudaError_t submit(cudaStream_t stream, Work work, bool kernel);

/// For CUDA calls that are not allowed while the calling thread captures (in the global or
/// thread-local mode) or another thread captures in the global mode: cudaMalloc, synchronous
/// waits. Returns cudaErrorStreamCaptureUnsupported and invalidates the capture, as CUDA does.
cudaError_t check_capture_safe(const char* call);

/// Waits until every stream of `device` has run its work (cudaFree's implicit synchronisation).
void synchronize_device(int device);

/// The random delay a stream worker waits before each piece of work.
void stream_delay();

}  // namespace collbench::stand_in
