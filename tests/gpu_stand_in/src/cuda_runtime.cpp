// The CUDA runtime API calls collbench makes, on the stand-in's devices, streams, events and
// graphs (runtime.h). Signatures are the real cuda_runtime_api.h's: this file includes it.
#include <cuda_runtime.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <vector>

#include "memory.h"
#include "runtime.h"
#include "stand_in.h"

// The handle types the CUDA headers leave opaque.
struct CUstream_st {
  int device = 0;
  unsigned flags = 0;
  bool legacy = false;
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<collbench::stand_in::Work> queue;
  std::uint64_t submitted = 0;  ///< pieces of work ever queued
  std::uint64_t completed = 0;  ///< pieces of work run
  bool destroyed = false;
  // Capture (cudaStreamBeginCapture .. cudaStreamEndCapture).
  bool capturing = false;
  cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal;
  std::thread::id capture_thread;
  std::string invalidated;  ///< why the capture can no longer be ended, "" while valid
  std::vector<collbench::stand_in::Work> captured;
};

struct CUevent_st {
  int device = 0;
  unsigned flags = 0;
  std::mutex mutex;
  std::condition_variable changed;
  std::uint64_t recorded = 0;  ///< records made (cudaEventRecord calls outside capture)
  std::uint64_t reached = 0;   ///< the last record its stream has reached
  collbench::stand_in::Clock::time_point at;
  bool captured = false;  ///< last recorded inside a capture: an ordering point, no time
};

struct CUgraph_st {
  std::vector<collbench::stand_in::Work> nodes;
};

struct CUgraphExec_st {
  std::shared_ptr<const std::vector<collbench::stand_in::Work>> nodes;
};

namespace collbench::stand_in {
namespace {

thread_local int current = 0;
thread_local cudaError_t last_error = cudaSuccess;

struct Registry {
  std::mutex mutex;
  std::set<CUstream_st*> streams;
  std::set<CUevent_st*> events;
  std::set<CUgraph_st*> graphs;
  std::set<CUgraphExec_st*> execs;
  std::map<int, CUstream_st*> legacy;  ///< device -> its legacy default stream
  std::map<int, std::pair<cudaError_t, std::string>> sticky;
};

Registry& registry() {
  static Registry* r = new Registry;  // leaked: workers outlive static destruction
  return *r;
}

std::atomic<std::uint64_t> next_seed{0};

void worker_loop(CUstream_st* s) {
  for (;;) {
    Work work;
    {
      std::unique_lock lock(s->mutex);
      s->changed.wait(lock, [&] { return !s->queue.empty() || s->destroyed; });
      if (s->queue.empty()) break;  // destroyed and drained
      work = std::move(s->queue.front());
      s->queue.pop_front();
    }
    stream_delay();
    // After an illegal address the context is gone: nothing more runs on the device.
    if (sticky_error(s->device) == cudaSuccess && work.run) work.run();
    {
      const std::lock_guard lock(s->mutex);
      ++s->completed;
    }
    s->changed.notify_all();
  }
  // cudaStreamDestroy returned long ago; the stream goes once its work has run.
  delete s;
}

CUstream_st* make_stream(int device, unsigned flags, bool legacy) {
  auto* s = new CUstream_st;
  s->device = device;
  s->flags = flags;
  s->legacy = legacy;
  std::thread(worker_loop, s).detach();
  return s;
}

/// The stream a handle names (the legacy one for nullptr), or nullptr when it names none.
CUstream_st* resolve(cudaStream_t stream) {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  if (stream == nullptr || stream == cudaStreamLegacy) {
    auto& legacy = r.legacy[current];
    if (!legacy) legacy = make_stream(current, cudaStreamDefault, true);
    return legacy;
  }
  return r.streams.count(stream) ? stream : nullptr;
}

/// Blocks until `s` has run everything queued before this call.
void drain(CUstream_st* s) {
  std::unique_lock lock(s->mutex);
  const std::uint64_t target = s->submitted;
  s->changed.wait(lock, [&] { return s->completed >= target; });
}

bool idle(CUstream_st* s) {
  const std::lock_guard lock(s->mutex);
  return s->completed >= s->submitted;
}

/// The streams whose work `s` must wait for under the legacy default stream's rule: the legacy
/// stream waits for every blocking stream of its device, and each of them for it.
std::vector<std::pair<CUstream_st*, std::uint64_t>> implicit_waits(CUstream_st* s) {
  std::vector<std::pair<CUstream_st*, std::uint64_t>> waits;
  if (!s->legacy && (s->flags & cudaStreamNonBlocking)) return waits;
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  const auto add = [&](CUstream_st* other) {
    if (other == s || other->device != s->device) return;
    const std::lock_guard l(other->mutex);
    if (other->completed < other->submitted) waits.emplace_back(other, other->submitted);
  };
  if (s->legacy) {
    for (CUstream_st* other : r.streams) {
      if (!(other->flags & cudaStreamNonBlocking)) add(other);
    }
  } else if (const auto it = r.legacy.find(s->device); it != r.legacy.end()) {
    add(it->second);
  }
  return waits;
}

void enqueue(CUstream_st* s, Work work) {
  if (work.enqueued) work.enqueued();
  auto waits = implicit_waits(s);
  if (!waits.empty()) {
    auto run = std::move(work.run);
    work.run = [waits, run] {
      for (auto& [other, target] : waits) {
        std::unique_lock lock(other->mutex);
        other->changed.wait(lock, [&] { return other->completed >= target; });
      }
      if (run) run();
    };
  }
  {
    const std::lock_guard lock(s->mutex);
    s->queue.push_back(std::move(work));
    ++s->submitted;
  }
  s->changed.notify_all();
}

struct ErrorText {
  cudaError_t code;
  const char* name;
  const char* text;
};

// The runtime's own names and strings for the errors the stand-in returns.
constexpr ErrorText kErrors[] = {
    {cudaSuccess, "cudaSuccess", "no error"},
    {cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
    {cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
    {cudaErrorInitializationError, "cudaErrorInitializationError", "initialization error"},
    {cudaErrorInvalidConfiguration, "cudaErrorInvalidConfiguration",
     "invalid configuration argument"},
    {cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
    {cudaErrorInvalidDevicePointer, "cudaErrorInvalidDevicePointer", "invalid device pointer"},
    {cudaErrorInvalidMemcpyDirection, "cudaErrorInvalidMemcpyDirection",
     "invalid copy direction for memcpy"},
    {cudaErrorNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected"},
    {cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
    {cudaErrorIllegalState, "cudaErrorIllegalState",
     "the operation cannot be performed in the present state"},
    {cudaErrorNotReady, "cudaErrorNotReady", "device not ready"},
    {cudaErrorIllegalAddress, "cudaErrorIllegalAddress",
     "an illegal memory access was encountered"},
    {cudaErrorNotSupported, "cudaErrorNotSupported", "operation not supported"},
    {cudaErrorStreamCaptureUnsupported, "cudaErrorStreamCaptureUnsupported",
     "operation not permitted when stream is capturing"},
    {cudaErrorStreamCaptureInvalidated, "cudaErrorStreamCaptureInvalidated",
     "operation failed due to a previous error during capture"},
    {cudaErrorStreamCaptureWrongThread, "cudaErrorStreamCaptureWrongThread",
     "attempt to terminate a thread-local capture sequence from another thread"},
    {cudaErrorUnknown, "cudaErrorUnknown", "unknown error"},
};

const ErrorText* error_text(cudaError_t e) {
  for (const ErrorText& t : kErrors) {
    if (t.code == e) return &t;
  }
  return nullptr;
}

/// Host memory that queued copies will still read (pinned sources are read when the stream runs
/// the copy). A copy back to the host leaves its destination undefined until it runs, unless
/// queued work still reads it: that work must see what the host wrote.
struct PendingReads {
  std::mutex mutex;
  std::multiset<std::pair<std::uintptr_t, std::uintptr_t>> ranges;

  void add(const void* p, std::size_t n) {
    const std::lock_guard lock(mutex);
    ranges.emplace(reinterpret_cast<std::uintptr_t>(p), reinterpret_cast<std::uintptr_t>(p) + n);
  }
  void remove(const void* p, std::size_t n) {
    const std::lock_guard lock(mutex);
    const auto it =
        ranges.find({reinterpret_cast<std::uintptr_t>(p), reinterpret_cast<std::uintptr_t>(p) + n});
    if (it != ranges.end()) ranges.erase(it);
  }
  bool overlaps(const void* p, std::size_t n) {
    const auto a = reinterpret_cast<std::uintptr_t>(p), b = a + n;
    const std::lock_guard lock(mutex);
    for (const auto& [lo, hi] : ranges) {
      if (lo < b && a < hi) return true;
    }
    return false;
  }
};

PendingReads& pending_reads() {
  static PendingReads* p = new PendingReads;
  return *p;
}

/// The first eight are the PCI buses of an HGX H100 board's GPUs.
int pci_bus(int physical) {
  static constexpr int kBuses[] = {0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb};
  return physical < 8 ? kBuses[physical] : 0xe0 + physical;
}

bool valid_device(int d) { return d >= 0 && d < device_count(); }

cudaError_t check_device(int d) {
  if (!valid_device(d)) return device_count() == 0 ? cudaErrorNoDevice : cudaErrorInvalidDevice;
  return sticky_error(d);
}

/// The captures that forbid an unsafe call on this thread: its own (unless relaxed) and any
/// other thread's in the global mode. Takes the registry lock.
std::vector<CUstream_st*> forbidding_captures() {
  std::vector<CUstream_st*> out;
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  const auto me = std::this_thread::get_id();
  for (CUstream_st* s : r.streams) {
    const std::lock_guard l(s->mutex);
    if (!s->capturing) continue;
    const bool mine = s->capture_thread == me;
    if ((mine && s->mode != cudaStreamCaptureModeRelaxed) ||
        (!mine && s->mode == cudaStreamCaptureModeGlobal)) {
      out.push_back(s);
    }
  }
  return out;
}

void invalidate(CUstream_st* s, const std::string& why) {
  const std::lock_guard lock(s->mutex);
  if (s->capturing && s->invalidated.empty()) s->invalidated = why;
}

}  // namespace

int current_device() { return current; }
int device_count() { return static_cast<int>(config().visible.size()); }

cudaError_t record(cudaError_t e) {
  if (e != cudaSuccess && e != cudaErrorNotReady) last_error = e;
  return e;
}

void set_sticky_error(int device, cudaError_t e, const std::string& why) {
  {
    Registry& r = registry();
    const std::lock_guard lock(r.mutex);
    if (r.sticky.count(device)) return;
    r.sticky[device] = {e, why};
  }
  const ErrorText* t = error_text(e);
  diagnostic(
      fmt::format("GPU {}: {} ({}): {}", device, t ? t->text : "error", t ? t->name : "?", why));
}

cudaError_t sticky_error(int device) {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  const auto it = r.sticky.find(device);
  return it == r.sticky.end() ? cudaSuccess : it->second.first;
}

cudaError_t stream_device(cudaStream_t stream, int* device) {
  CUstream_st* s = resolve(stream);
  if (!s) return cudaErrorInvalidResourceHandle;
  if (device) *device = s->device;
  return cudaSuccess;
}

bool stream_capturing(cudaStream_t stream) {
  CUstream_st* s = resolve(stream);
  if (!s) return false;
  const std::lock_guard lock(s->mutex);
  return s->capturing;
}

cudaError_t submit(cudaStream_t stream, Work work, bool kernel) {
  CUstream_st* s = resolve(stream);
  if (!s) return cudaErrorInvalidResourceHandle;
  if (const cudaError_t e = check_device(s->device); e != cudaSuccess) return e;
  // CUDA: "a kernel launch will fail if it is issued to a stream that is not associated to the
  // current device"; copies may go to any device's stream.
  if (kernel && s->device != current) return cudaErrorInvalidResourceHandle;
  {
    const std::lock_guard lock(s->mutex);
    if (s->capturing) {
      s->captured.push_back(std::move(work));
      return cudaSuccess;
    }
  }
  enqueue(s, std::move(work));
  return cudaSuccess;
}

cudaError_t check_capture_safe(const char* call) {
  const auto captures = forbidding_captures();
  if (captures.empty()) return cudaSuccess;
  for (CUstream_st* s : captures) {
    invalidate(s, fmt::format("{} was called while the stream was capturing", call));
  }
  return cudaErrorStreamCaptureUnsupported;
}

void synchronize_device(int device) {
  std::vector<CUstream_st*> streams;
  {
    Registry& r = registry();
    const std::lock_guard lock(r.mutex);
    for (CUstream_st* s : r.streams) {
      if (s->device == device) streams.push_back(s);
    }
    if (const auto it = r.legacy.find(device); it != r.legacy.end()) streams.push_back(it->second);
  }
  for (CUstream_st* s : streams) drain(s);
}

void stream_delay() {
  const double max_us = config().max_delay_us;
  if (max_us <= 0) return;
  thread_local std::mt19937_64 rng(config().seed ^
                                   (next_seed.fetch_add(1) * 0x9e3779b97f4a7c15ULL));
  // Mostly short, sometimes long: the host usually looks right after it submitted, and a
  // missing wait must not pass because the worker happened to be quick.
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  double us = unit(rng) * max_us;
  if (unit(rng) < 1.0 / 32) us += 10 * max_us * unit(rng);
  if (us >= 1) std::this_thread::sleep_for(std::chrono::duration<double, std::micro>(us));
}

}  // namespace collbench::stand_in

using namespace collbench::stand_in;

// --- errors and versions ---------------------------------------------------------------------

extern "C" {

cudaError_t cudaGetLastError(void) {
  const int d = current;
  if (valid_device(d)) {
    if (const cudaError_t s = sticky_error(d); s != cudaSuccess) return s;
  }
  const cudaError_t e = last_error;
  last_error = cudaSuccess;
  return e;
}

cudaError_t cudaPeekAtLastError(void) {
  if (valid_device(current)) {
    if (const cudaError_t s = sticky_error(current); s != cudaSuccess) return s;
  }
  return last_error;
}

const char* cudaGetErrorString(cudaError_t error) {
  const ErrorText* t = error_text(error);
  return t ? t->text : "unrecognized error code";
}

const char* cudaGetErrorName(cudaError_t error) {
  const ErrorText* t = error_text(error);
  return t ? t->name : "unrecognized error code";
}

cudaError_t cudaRuntimeGetVersion(int* runtimeVersion) {
  if (!runtimeVersion) return record(cudaErrorInvalidValue);
  *runtimeVersion = CUDART_VERSION;
  return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int* driverVersion) {
  if (!driverVersion) return record(cudaErrorInvalidValue);
  // The stand-in plays a driver of the runtime's own version.
  *driverVersion = CUDART_VERSION;
  return cudaSuccess;
}

// --- devices ---------------------------------------------------------------------------------

cudaError_t cudaGetDeviceCount(int* count) {
  if (!count) return record(cudaErrorInvalidValue);
  *count = device_count();
  return *count == 0 ? record(cudaErrorNoDevice) : cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  if (!valid_device(device)) return record(check_device(device));
  current = device;
  return record(sticky_error(device));
}

cudaError_t cudaGetDevice(int* device) {
  if (!device) return record(cudaErrorInvalidValue);
  if (device_count() == 0) return record(cudaErrorNoDevice);
  *device = current;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  if (!prop) return record(cudaErrorInvalidValue);
  if (const cudaError_t e = check_device(device); e != cudaSuccess) return record(e);
  const int physical = config().visible[static_cast<std::size_t>(device)];
  *prop = cudaDeviceProp{};
  // The name says what it is: results measured here must never pass for a GPU's.
  std::snprintf(prop->name, sizeof(prop->name), "collbench GPU stand-in (not a GPU)");
  for (int i = 0; i < 16; ++i) prop->uuid.bytes[i] = static_cast<char>(0x5a ^ (physical * 16 + i));
  prop->totalGlobalMem = config().memory_bytes;
  prop->sharedMemPerBlock = 48 * 1024;
  prop->regsPerBlock = 65536;
  prop->warpSize = 32;
  prop->maxThreadsPerBlock = 1024;
  prop->maxThreadsDim[0] = prop->maxThreadsDim[1] = 1024;
  prop->maxThreadsDim[2] = 64;
  prop->maxGridSize[0] = 2147483647;
  prop->maxGridSize[1] = prop->maxGridSize[2] = 65535;
  prop->major = 9;
  prop->minor = 0;
  prop->multiProcessorCount = 132;
  prop->concurrentKernels = 1;
  prop->pciBusID = pci_bus(physical);
  prop->pciDeviceID = 0;
  prop->pciDomainID = 0;
  prop->asyncEngineCount = 3;
  prop->unifiedAddressing = 1;
  prop->memoryBusWidth = 5120;
  prop->l2CacheSize = 50 * 1024 * 1024;
  prop->maxThreadsPerMultiProcessor = 2048;
  prop->canMapHostMemory = 1;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  if (!value) return record(cudaErrorInvalidValue);
  if (const cudaError_t e = check_device(device); e != cudaSuccess) return record(e);
  switch (attr) {
    case cudaDevAttrMemoryClockRate:
      *value = 2619000;  // kHz, an H100 SXM's HBM3
      return cudaSuccess;
    case cudaDevAttrGlobalMemoryBusWidth:
      *value = 5120;
      return cudaSuccess;
    case cudaDevAttrComputeCapabilityMajor:
      *value = 9;
      return cudaSuccess;
    case cudaDevAttrComputeCapabilityMinor:
      *value = 0;
      return cudaSuccess;
    case cudaDevAttrMultiProcessorCount:
      *value = 132;
      return cudaSuccess;
    case cudaDevAttrPciBusId:
      *value = pci_bus(config().visible[static_cast<std::size_t>(device)]);
      return cudaSuccess;
    case cudaDevAttrPciDeviceId:
    case cudaDevAttrPciDomainId:
      *value = 0;
      return cudaSuccess;
    default:
      break;
  }
  diagnostic(
      fmt::format("cudaDeviceGetAttribute: attribute {} is not modelled", static_cast<int>(attr)));
  return record(cudaErrorNotSupported);
}

cudaError_t cudaDeviceGetPCIBusId(char* pciBusId, int len, int device) {
  if (!pciBusId || len <= 0) return record(cudaErrorInvalidValue);
  if (const cudaError_t e = check_device(device); e != cudaSuccess) return record(e);
  const std::string id =
      fmt::format("0000:{:02x}:00.0", pci_bus(config().visible[static_cast<std::size_t>(device)]));
  if (static_cast<int>(id.size()) + 1 > len) return record(cudaErrorInvalidValue);
  std::memcpy(pciBusId, id.c_str(), id.size() + 1);
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize(void) {
  if (const cudaError_t e = check_device(current); e != cudaSuccess) return record(e);
  if (const cudaError_t e = check_capture_safe("cudaDeviceSynchronize"); e != cudaSuccess) {
    return record(e);
  }
  synchronize_device(current);
  return record(sticky_error(current));
}

cudaError_t cudaMemGetInfo(size_t* free, size_t* total) {
  if (!free || !total) return record(cudaErrorInvalidValue);
  if (const cudaError_t e = check_device(current); e != cudaSuccess) return record(e);
  *total = config().memory_bytes;
  *free = device_free(current);
  return cudaSuccess;
}

// --- memory ----------------------------------------------------------------------------------

cudaError_t cudaMalloc(void** devPtr, size_t size) {
  if (!devPtr) return record(cudaErrorInvalidValue);
  if (const cudaError_t e = check_device(current); e != cudaSuccess) return record(e);
  if (const cudaError_t e = check_capture_safe("cudaMalloc"); e != cudaSuccess) return record(e);
  return record(allocate_device(current, size, AllocationKind::kCudaMalloc, devPtr));
}

cudaError_t cudaFree(void* devPtr) {
  // cudaFree(NULL) initialises the context, as NCCL uses it.
  if (!devPtr) return record(check_device(current));
  if (const cudaError_t e = check_capture_safe("cudaFree"); e != cudaSuccess) return record(e);
  const auto alloc = find_allocation(devPtr);
  if (!alloc || alloc->kind != AllocationKind::kCudaMalloc ||
      alloc->base != reinterpret_cast<std::uintptr_t>(devPtr)) {
    diagnostic(fmt::format("cudaFree({}): {}", devPtr, describe(devPtr)));
    return record(cudaErrorInvalidValue);
  }
  // cudaFree synchronises the device: no queued work may still use the memory.
  synchronize_device(alloc->device);
  return record(free_device(devPtr, AllocationKind::kCudaMalloc));
}

cudaError_t cudaMallocHost(void** ptr, size_t size) {
  if (!ptr) return record(cudaErrorInvalidValue);
  if (const cudaError_t e = check_capture_safe("cudaMallocHost"); e != cudaSuccess) {
    return record(e);
  }
  return record(allocate_pinned(size, ptr));
}

// cuda_runtime.h's C++ cudaMallocHost overloads come here.
cudaError_t cudaHostAlloc(void** pHost, size_t size, unsigned int flags) {
  if (!pHost ||
      (flags & ~(cudaHostAllocPortable | cudaHostAllocMapped | cudaHostAllocWriteCombined))) {
    return record(cudaErrorInvalidValue);
  }
  return cudaMallocHost(pHost, size);
}

cudaError_t cudaFreeHost(void* ptr) {
  if (!ptr) return cudaSuccess;
  if (const cudaError_t e = check_capture_safe("cudaFreeHost"); e != cudaSuccess) return record(e);
  // Pinned memory may be the target of queued copies: CUDA synchronises here too.
  for (int d = 0; d < device_count(); ++d) synchronize_device(d);
  return record(free_pinned(ptr));
}

cudaError_t cudaMemsetAsync(void* devPtr, int value, size_t count, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  if (!is_device_range(devPtr, count)) {
    diagnostic(fmt::format("cudaMemsetAsync({}, {} bytes): {}", devPtr, count, describe(devPtr)));
    return record(cudaErrorInvalidValue);
  }
  unsigned char* at = worker_view(devPtr);
  return record(submit(
      stream,
      Work{"cudaMemsetAsync", [at, value, count] { std::memset(at, value, count); }, nullptr},
      false));
}

cudaError_t cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void* userData) {
  if (!fn) return record(cudaErrorInvalidValue);
  // Runs on the stream's worker when the stream reaches it, as CUDA runs it on a driver thread:
  // the work behind it waits until it returns.
  return record(
      submit(stream, Work{"cudaLaunchHostFunc", [fn, userData] { fn(userData); }, nullptr}, false));
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                            cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  const bool dst_device = is_device_range(dst, count);
  const bool src_device = is_device_range(src, count);
  if (kind == cudaMemcpyDefault) {
    kind = dst_device ? (src_device ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice)
                      : (src_device ? cudaMemcpyDeviceToHost : cudaMemcpyHostToHost);
  }
  const bool want_dst_device = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
  const bool want_src_device = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
  // Each side must be what the direction says, and a device side wholly inside one allocation.
  if (dst_device != want_dst_device || src_device != want_src_device) {
    diagnostic(fmt::format(
        "cudaMemcpyAsync(dst {}, src {}, {} bytes, kind {}): the destination is {}, the source {}",
        dst, src, count, static_cast<int>(kind), describe(dst), describe(src)));
    return record(cudaErrorInvalidValue);
  }
  const bool src_pinned = !src_device && is_pinned_range(src, count);
  const bool dst_pinned = !dst_device && is_pinned_range(dst, count);
  if (stream_capturing(stream) && ((!src_device && !src_pinned) || (!dst_device && !dst_pinned))) {
    return record(cudaErrorStreamCaptureUnsupported);  // pageable memory cannot be in a graph
  }
  unsigned char* to = dst_device ? worker_view(dst) : static_cast<unsigned char*>(dst);
  const unsigned char* from =
      src_device ? worker_view(src) : static_cast<const unsigned char*>(src);
  Work work;
  work.what = "cudaMemcpyAsync";
  if (!src_device && !src_pinned) {
    // Pageable memory is staged before the call returns: the caller may reuse it at once.
    auto staged = std::make_shared<std::vector<unsigned char>>(from, from + count);
    work.run = [to, staged] { std::memcpy(to, staged->data(), staged->size()); };
  } else if (!src_device) {
    // Pinned memory is read when the stream runs the copy.
    work.run = [to, from, count] {
      std::memcpy(to, from, count);
      pending_reads().remove(from, count);
    };
    work.enqueued = [from, count] { pending_reads().add(from, count); };
  } else {
    work.run = [to, from, count] { std::memcpy(to, from, count); };
  }
  if (!dst_device) {
    // Until the stream reaches the copy, the host destination holds nothing it can rely on: a
    // read without waiting for the stream must see garbage, not the previous result.
    auto before = std::move(work.enqueued);
    work.enqueued = [before, to, count] {
      if (before) before();
      if (!pending_reads().overlaps(to, count)) std::memset(to, 0xa5, count);
    };
  }
  return record(submit(stream, std::move(work), false));
}

// --- streams ---------------------------------------------------------------------------------

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* pStream, unsigned int flags) {
  if (!pStream || (flags & ~cudaStreamNonBlocking)) return record(cudaErrorInvalidValue);
  if (const cudaError_t e = check_device(current); e != cudaSuccess) return record(e);
  CUstream_st* s = make_stream(current, flags, false);
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  r.streams.insert(s);
  *pStream = s;
  return cudaSuccess;
}

cudaError_t cudaStreamCreate(cudaStream_t* pStream) {
  return cudaStreamCreateWithFlags(pStream, cudaStreamDefault);
}

cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  Registry& r = registry();
  {
    const std::lock_guard lock(r.mutex);
    if (!stream || !r.streams.erase(stream)) return record(cudaErrorInvalidResourceHandle);
  }
  // CUDA returns at once; the stream's resources go when its work has run.
  {
    const std::lock_guard lock(stream->mutex);
    stream->destroyed = true;
    stream->capturing = false;
  }
  stream->changed.notify_all();
  return cudaSuccess;
}

cudaError_t cudaStreamQuery(cudaStream_t stream) {
  CUstream_st* s = resolve(stream);
  if (!s) return record(cudaErrorInvalidResourceHandle);
  {
    const std::lock_guard lock(s->mutex);
    if (s->capturing) {
      if (s->invalidated.empty()) s->invalidated = "cudaStreamQuery on the capturing stream";
      return record(cudaErrorStreamCaptureUnsupported);
    }
  }
  if (const cudaError_t e = sticky_error(s->device); e != cudaSuccess) return record(e);
  return idle(s) ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  CUstream_st* s = resolve(stream);
  if (!s) return record(cudaErrorInvalidResourceHandle);
  {
    const std::lock_guard lock(s->mutex);
    if (s->capturing) {
      if (s->invalidated.empty()) s->invalidated = "cudaStreamSynchronize on the capturing stream";
      return record(cudaErrorStreamCaptureUnsupported);
    }
  }
  if (const cudaError_t e = check_capture_safe("cudaStreamSynchronize"); e != cudaSuccess) {
    return record(e);
  }
  drain(s);
  return record(sticky_error(s->device));
}

cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode) {
  CUstream_st* s = resolve(stream);
  if (!s) return record(cudaErrorInvalidResourceHandle);
  // The legacy default stream synchronises with every blocking stream: it cannot be captured.
  if (s->legacy) return record(cudaErrorStreamCaptureUnsupported);
  const std::lock_guard lock(s->mutex);
  if (s->capturing) return record(cudaErrorIllegalState);
  s->capturing = true;
  s->mode = mode;
  s->capture_thread = std::this_thread::get_id();
  s->invalidated.clear();
  s->captured.clear();
  return cudaSuccess;
}

cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t* pGraph) {
  if (!pGraph) return record(cudaErrorInvalidValue);
  CUstream_st* s = resolve(stream);
  if (!s) return record(cudaErrorInvalidResourceHandle);
  std::vector<Work> nodes;
  {
    const std::lock_guard lock(s->mutex);
    if (!s->capturing) return record(cudaErrorIllegalState);
    if (s->mode != cudaStreamCaptureModeRelaxed &&
        s->capture_thread != std::this_thread::get_id()) {
      return record(cudaErrorStreamCaptureWrongThread);
    }
    s->capturing = false;
    nodes = std::move(s->captured);
    s->captured.clear();
    if (!s->invalidated.empty()) {
      diagnostic(
          fmt::format("cudaStreamEndCapture: the capture was invalidated: {}", s->invalidated));
      *pGraph = nullptr;
      return record(cudaErrorStreamCaptureInvalidated);
    }
  }
  auto* g = new CUgraph_st{std::move(nodes)};
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  r.graphs.insert(g);
  *pGraph = g;
  return cudaSuccess;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t stream, cudaStreamCaptureStatus* pCaptureStatus) {
  if (!pCaptureStatus) return record(cudaErrorInvalidValue);
  CUstream_st* s = resolve(stream);
  if (!s) return record(cudaErrorInvalidResourceHandle);
  const std::lock_guard lock(s->mutex);
  *pCaptureStatus = !s->capturing            ? cudaStreamCaptureStatusNone
                    : s->invalidated.empty() ? cudaStreamCaptureStatusActive
                                             : cudaStreamCaptureStatusInvalidated;
  return cudaSuccess;
}

// --- graphs ----------------------------------------------------------------------------------

cudaError_t cudaGraphInstantiate(cudaGraphExec_t* pGraphExec, cudaGraph_t graph,
                                 unsigned long long flags) {
  if (!pGraphExec || flags != 0) return record(cudaErrorInvalidValue);
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  if (!r.graphs.count(graph)) return record(cudaErrorInvalidResourceHandle);
  auto* exec = new CUgraphExec_st{std::make_shared<const std::vector<Work>>(graph->nodes)};
  r.execs.insert(exec);
  *pGraphExec = exec;
  return cudaSuccess;
}

cudaError_t cudaGraphUpload(cudaGraphExec_t graphExec, cudaStream_t stream) {
  {
    Registry& r = registry();
    const std::lock_guard lock(r.mutex);
    if (!r.execs.count(graphExec)) return record(cudaErrorInvalidResourceHandle);
  }
  return record(submit(stream, Work{"cudaGraphUpload", nullptr, nullptr}, false));
}

cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream) {
  std::shared_ptr<const std::vector<Work>> nodes;
  {
    Registry& r = registry();
    const std::lock_guard lock(r.mutex);
    if (!r.execs.count(graphExec)) return record(cudaErrorInvalidResourceHandle);
    nodes = graphExec->nodes;
  }
  if (stream_capturing(stream)) return record(cudaErrorStreamCaptureUnsupported);
  Work launch;
  launch.what = "cudaGraphLaunch";
  launch.enqueued = [nodes] {
    for (const Work& w : *nodes) {
      if (w.enqueued) w.enqueued();
    }
  };
  launch.run = [nodes] {
    for (std::size_t i = 0; i < nodes->size(); ++i) {
      if (i > 0) stream_delay();
      if ((*nodes)[i].run) (*nodes)[i].run();
    }
  };
  return record(submit(stream, std::move(launch), false));
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec) {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  if (!r.execs.erase(graphExec)) return record(cudaErrorInvalidResourceHandle);
  delete graphExec;  // launches still queued hold their own reference to the nodes
  return cudaSuccess;
}

cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  if (!r.graphs.erase(graph)) return record(cudaErrorInvalidResourceHandle);
  delete graph;
  return cudaSuccess;
}

// --- events ----------------------------------------------------------------------------------

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
  if (!event) return record(cudaErrorInvalidValue);
  if (const cudaError_t e = check_device(current); e != cudaSuccess) return record(e);
  auto* ev = new CUevent_st;
  ev->device = current;
  ev->flags = flags;
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  r.events.insert(ev);
  *event = ev;
  return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t* event) {
  return cudaEventCreateWithFlags(event, cudaEventDefault);
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  if (!r.events.erase(event)) return record(cudaErrorInvalidResourceHandle);
  // A record still queued would write into freed memory: the event lives as long as the process
  // (events are few), as CUDA keeps a destroyed event's pending record valid.
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  {
    Registry& r = registry();
    const std::lock_guard lock(r.mutex);
    if (!r.events.count(event)) return record(cudaErrorInvalidResourceHandle);
  }
  int device = 0;
  if (const cudaError_t e = stream_device(stream, &device); e != cudaSuccess) return record(e);
  // CUDA: "cudaEventRecord() will fail if the input event and input stream are associated to
  // different devices".
  if (device != event->device) return record(cudaErrorInvalidResourceHandle);
  if (stream_capturing(stream)) {
    // Inside a capture a record is an ordering point of the graph, not a time.
    const std::lock_guard lock(event->mutex);
    event->captured = true;
    return record(submit(stream, Work{"cudaEventRecord (captured)", nullptr, nullptr}, false));
  }
  std::uint64_t generation = 0;
  {
    const std::lock_guard lock(event->mutex);
    generation = ++event->recorded;
    event->captured = false;
  }
  CUevent_st* ev = event;
  return record(submit(stream,
                       Work{"cudaEventRecord",
                            [ev, generation] {
                              {
                                const std::lock_guard lock(ev->mutex);
                                ev->at = Clock::now();
                                ev->reached = std::max(ev->reached, generation);
                              }
                              ev->changed.notify_all();
                            },
                            nullptr},
                       false));
}

cudaError_t cudaEventQuery(cudaEvent_t event) {
  {
    Registry& r = registry();
    const std::lock_guard lock(r.mutex);
    if (!r.events.count(event)) return record(cudaErrorInvalidResourceHandle);
  }
  const std::lock_guard lock(event->mutex);
  return event->reached >= event->recorded ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  {
    Registry& r = registry();
    const std::lock_guard lock(r.mutex);
    if (!r.events.count(event)) return record(cudaErrorInvalidResourceHandle);
  }
  if (const cudaError_t e = check_capture_safe("cudaEventSynchronize"); e != cudaSuccess) {
    return record(e);
  }
  std::unique_lock lock(event->mutex);
  const std::uint64_t target = event->recorded;
  event->changed.wait(lock, [&] { return event->reached >= target; });
  return record(sticky_error(event->device));
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  if (!ms) return record(cudaErrorInvalidValue);
  {
    Registry& r = registry();
    const std::lock_guard lock(r.mutex);
    if (!r.events.count(start) || !r.events.count(end)) {
      return record(cudaErrorInvalidResourceHandle);
    }
  }
  if (start->device != end->device) return record(cudaErrorInvalidResourceHandle);
  if ((start->flags | end->flags) & cudaEventDisableTiming) {
    return record(cudaErrorInvalidResourceHandle);
  }
  Clock::time_point from, to;
  for (CUevent_st* ev : {start, end}) {
    const std::lock_guard lock(ev->mutex);
    if (ev->recorded == 0 || ev->captured) return record(cudaErrorInvalidResourceHandle);
    if (ev->reached < ev->recorded) return cudaErrorNotReady;
    (ev == start ? from : to) = ev->at;
  }
  *ms = std::chrono::duration<float, std::milli>(to - from).count();
  return cudaSuccess;
}

}  // extern "C"
