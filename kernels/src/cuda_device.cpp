// The CUDA Device: host side (memory, streams, events, graphs). The kernels are in
// cuda_kernels.cu; this file is plain C++ against the CUDA runtime API.
#include "collbench/cuda_device.h"

#include <cuda_runtime.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>
#include <unordered_set>
#include <vector>

#include "collbench/cuda_check.h"
#include "collbench/error.h"
#include "collbench/pattern.h"
#include "collbench/types.h"
#include "cuda_kernels.h"

namespace collbench {
namespace {

/// "580.159 (CUDA 13.0)": the kernel driver and the CUDA version it provides.
std::string driver_description() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::stringstream text;
  text << in.rdbuf();
  const std::string kernel = parse_nvidia_driver_version(text.str());
  const std::string api = cuda_driver_version();
  if (kernel.empty()) return api.empty() ? std::string() : "CUDA " + api;
  return api.empty() ? kernel : fmt::format("{} (CUDA {})", kernel, api);
}

/// CUDA events on the device's stream.
class CudaTimer final : public Timer {
 public:
  CudaTimer(std::size_t slots, cudaStream_t stream) : stream_(stream), events_(slots, nullptr) {
    for (auto& e : events_) CUDA_CHECK(cudaEventCreate(&e));
  }
  ~CudaTimer() override {
    for (auto e : events_) {
      if (e) cudaEventDestroy(e);
    }
  }
  void record(std::size_t slot) override {
    CUDA_CHECK(cudaEventRecord(events_.at(slot), stream_));
    last_ = slot;
    any_ = true;
  }
  void synchronize() override {
    // Records complete in stream order: the latest one completing implies all earlier ones did.
    if (any_) CUDA_CHECK(cudaEventSynchronize(events_[last_]));
  }
  double seconds(std::size_t from, std::size_t to) const override {
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, events_.at(from), events_.at(to)));
    return static_cast<double>(ms) * 1e-3;
  }
  std::size_t capacity() const override { return events_.size(); }

 private:
  cudaStream_t stream_;
  std::vector<cudaEvent_t> events_;
  std::size_t last_ = 0;
  bool any_ = false;
};

class CudaDeviceImpl final : public CudaDevice {
 public:
  CudaDeviceImpl(int ordinal, bool null_stream) : ordinal_(ordinal) {
    CUDA_CHECK(cudaSetDevice(ordinal));
    CUDA_CHECK(cudaGetDeviceProperties(&prop_, ordinal));
    if (!null_stream) CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    CUDA_CHECK(cudaMalloc(&counters_, sizeof(cuda::VerifyCounters)));
    CUDA_CHECK(cudaMallocHost(&host_counters_, sizeof(cuda::VerifyCounters)));
    CUDA_CHECK(cudaMallocHost(&host_element_, 16));
    // Grid-stride kernels: a few waves of full blocks per SM cover any size.
    blocks_cap_ = prop_.multiProcessorCount * 8;
    char bus[64] = {};
    if (cudaDeviceGetPCIBusId(bus, sizeof(bus), ordinal) == cudaSuccess) pci_bus_id_ = bus;
    int clock_khz = 0, bus_bits = 0;
    if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, ordinal) == cudaSuccess &&
        cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, ordinal) ==
            cudaSuccess) {
      peak_gbps_ = 2.0 * clock_khz * 1e3 * (bus_bits / 8.0) / 1e9;  // double data rate
    }
    driver_ = driver_description();
    runtime_ = cuda_runtime_version();
  }

  ~CudaDeviceImpl() override {
    destroy_graph();
    if (host_element_) cudaFreeHost(host_element_);
    if (host_counters_) cudaFreeHost(host_counters_);
    if (counters_) cudaFree(counters_);
    if (stream_) cudaStreamDestroy(stream_);
  }

  DeviceInfo info() const override {
    DeviceInfo d;
    d.model = prop_.name;
    d.driver_version = driver_;
    d.runtime_version = runtime_.empty() ? std::string() : "CUDA " + runtime_;
    d.pci_bus_id = pci_bus_id_;
    d.index = ordinal_;
    d.memory_bytes = prop_.totalGlobalMem;
    return d;
  }
  MemoryKind memory_kind() const override { return MemoryKind::kDevice; }
  std::size_t available_bytes() const override {
    std::size_t free_bytes = 0, total = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
    return free_bytes;
  }

  void* allocate(std::size_t bytes) override {
    if (allocator_.allocate) {
      void* p = allocator_.allocate(bytes);
      custom_.insert(p);
      return p;
    }
    void* p = nullptr;
    const cudaError_t e = cudaMalloc(&p, bytes);
    if (e != cudaSuccess) {
      throw_runtime("cannot allocate {} bytes on GPU {} ({}): {} ({}); lower -e", bytes, ordinal_,
                    prop_.name, cudaGetErrorString(e), cudaGetErrorName(e));
    }
    return p;
  }
  void release(void* pointer) noexcept override {
    if (!pointer) return;
    if (custom_.erase(pointer)) {
      try {
        allocator_.release(pointer);
      } catch (...) {
        // Releasing during teardown: nothing useful to do with the error.
      }
      return;
    }
    cudaFree(pointer);
  }

  void fill(void* destination, const FillSpec& spec) override {
    check_launch(cuda::launch_fill(destination, spec, stream_, blocks_cap_), "fill");
  }
  void poison(void* destination, DType dtype, std::size_t count) override {
    check_launch(cuda::launch_poison(destination, dtype, count, stream_, blocks_cap_), "poison");
  }

  VerifyResult verify(const void* data, const VerifySpec& spec) override {
    VerifyResult result;
    if (spec.count == 0) return result;
    CUDA_CHECK(cudaMemsetAsync(&counters_->wrong, 0, sizeof(counters_->wrong), stream_));
    CUDA_CHECK(cudaMemsetAsync(&counters_->first, 0xff, sizeof(counters_->first), stream_));
    check_launch(cuda::launch_verify(data, spec, counters_, stream_, blocks_cap_), "verify");
    CUDA_CHECK(cudaMemcpyAsync(host_counters_, counters_, sizeof(cuda::VerifyCounters),
                               cudaMemcpyDeviceToHost, stream_));
    wait(poll_);
    result.wrong = host_counters_->wrong;
    if (result.wrong == 0) return result;
    // The first mismatch: its expected value from the same pattern on the host, its value read
    // back.
    result.first_index = host_counters_->first;
    double tolerance = 0;
    result.first_expected = pattern::expected_value(spec, result.first_index, &tolerance);
    const std::size_t es = size_of(spec.key.dtype);
    CUDA_CHECK(cudaMemcpyAsync(host_element_,
                               static_cast<const char*>(data) + result.first_index * es, es,
                               cudaMemcpyDeviceToHost, stream_));
    wait(poll_);
    result.first_got = pattern::load(host_element_, 0, spec.key.dtype);
    return result;
  }

  void synchronize() override { wait(poll_); }

  std::unique_ptr<Timer> make_timer(std::size_t slots) override {
    return std::make_unique<CudaTimer>(slots, stream_);
  }

  bool supports_graphs() const override { return stream_ != nullptr; }
  void begin_capture() override {
    destroy_graph();
    // Thread-local mode: only this thread's unsafe calls break the capture, not the library's
    // helper threads.
    CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
  }
  void end_capture() override {
    CUDA_CHECK(cudaStreamEndCapture(stream_, &graph_));
    CUDA_CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
    // Upload now, so that the first timed launch does not also pay for moving the graph to the
    // device.
    CUDA_CHECK(cudaGraphUpload(exec_, stream_));
    CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  void launch_graph() override {
    if (!exec_) throw_runtime("CUDA graph launch without a captured graph");
    CUDA_CHECK(cudaGraphLaunch(exec_, stream_));
  }
  void destroy_graph() override {
    if (exec_) cudaGraphExecDestroy(exec_);
    if (graph_) cudaGraphDestroy(graph_);
    exec_ = nullptr;
    graph_ = nullptr;
  }

  CUstream_st* stream() const override { return stream_; }
  int ordinal() const override { return ordinal_; }
  int compute_capability() const override { return prop_.major * 10 + prop_.minor; }
  double peak_memory_bandwidth_gbps() const override { return peak_gbps_; }
  void set_allocator(CudaAllocator allocator) override { allocator_ = std::move(allocator); }
  void set_wait_poll(std::function<void()> poll) override { poll_ = std::move(poll); }

  void wait(const std::function<void()>& poll) override {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    for (unsigned spins = 0;; ++spins) {
      const cudaError_t e = cudaStreamQuery(stream_);
      if (e == cudaSuccess) return;
      if (e != cudaErrorNotReady)
        cuda_fail(e, "cudaStreamQuery (waiting for the GPU)", __FILE__, __LINE__);
      if (poll) poll();
      // Spin briefly (small operations finish within microseconds), then stop burning a core.
      if (spins > 64) {
        if (Clock::now() - start < std::chrono::milliseconds(2))
          std::this_thread::yield();
        else
          std::this_thread::sleep_for(std::chrono::microseconds(50));
      }
    }
  }

 private:
  void check_launch(cudaError_t e, const char* what) {
    if (e != cudaSuccess) {
      throw_runtime("cannot launch the {} kernel on GPU {} ({}): {} ({})", what, ordinal_,
                    prop_.name, cudaGetErrorString(e), cudaGetErrorName(e));
    }
  }

  int ordinal_;
  cudaDeviceProp prop_{};
  cudaStream_t stream_ = nullptr;
  cuda::VerifyCounters* counters_ = nullptr;
  cuda::VerifyCounters* host_counters_ = nullptr;
  void* host_element_ = nullptr;
  int blocks_cap_ = 1;
  std::string pci_bus_id_, driver_, runtime_;
  double peak_gbps_ = 0;
  CudaAllocator allocator_;
  std::unordered_set<void*> custom_;
  std::function<void()> poll_;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace

CudaProbe probe_cuda() {
  CudaProbe probe;
  int count = 0;  // left unwritten by the runtime when it fails
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    probe.error = fmt::format("{} ({})", cudaGetErrorString(e), cudaGetErrorName(e));
    cudaGetLastError();  // clear the sticky-free error so later queries start clean
    return probe;
  }
  probe.device_count = count;
  if (count == 0) probe.error = "the CUDA runtime reports no GPU";
  return probe;
}

std::string cuda_runtime_version() {
  int v = 0;
  if (cudaRuntimeGetVersion(&v) != cudaSuccess || v <= 0) return "";
  return format_cuda_version(v);
}

std::string cuda_driver_version() {
  int v = 0;
  if (cudaDriverGetVersion(&v) != cudaSuccess || v <= 0) return "";  // 0: no driver
  return format_cuda_version(v);
}

std::unique_ptr<CudaDevice> make_cuda_device(int ordinal, bool null_stream) {
  return std::make_unique<CudaDeviceImpl>(ordinal, null_stream);
}

}  // namespace collbench
