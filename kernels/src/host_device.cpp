#include "collbench/host_device.h"

#include <sys/sysinfo.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <new>
#include <string>
#include <vector>

#include "collbench/error.h"
#include "collbench/pattern.h"

namespace collbench {
namespace {

/// Reads a "Name:   123 kB" line of /proc/meminfo, in bytes (0 when absent).
std::size_t meminfo_bytes(const std::string& field) {
  std::ifstream in("/proc/meminfo");
  std::string name;
  std::size_t kib = 0;
  std::string unit;
  while (in >> name >> kib >> unit) {
    if (name == field + ":") return kib * 1024;
  }
  return 0;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "host CPU";
}

/// Clock reads between operations: cheap enough to sit between every two timed iterations.
class HostTimer final : public Timer {
 public:
  explicit HostTimer(std::size_t slots) : stamps_(slots) {}
  void record(std::size_t slot) override { stamps_[slot] = std::chrono::steady_clock::now(); }
  void synchronize() override {}
  double seconds(std::size_t from, std::size_t to) const override {
    return std::chrono::duration<double>(stamps_[to] - stamps_[from]).count();
  }
  std::size_t capacity() const override { return stamps_.size(); }

 private:
  std::vector<std::chrono::steady_clock::time_point> stamps_;
};

class HostDevice final : public Device {
 public:
  explicit HostDevice(int ranks_on_host) : ranks_on_host_(ranks_on_host < 1 ? 1 : ranks_on_host) {}

  DeviceInfo info() const override {
    DeviceInfo d;
    d.model = cpu_model();
    d.memory_bytes = meminfo_bytes("MemTotal");
    return d;
  }
  MemoryKind memory_kind() const override { return MemoryKind::kHost; }
  std::size_t available_bytes() const override {
    std::size_t available = meminfo_bytes("MemAvailable");
    if (available == 0) {
      struct sysinfo si {};
      if (sysinfo(&si) == 0) available = static_cast<std::size_t>(si.freeram) * si.mem_unit;
    }
    return available / static_cast<std::size_t>(ranks_on_host_);
  }

  void* allocate(std::size_t bytes) override {
    constexpr std::size_t kAlign = 4096;  // page-aligned, as registration-capable fabrics prefer
    void* p = std::aligned_alloc(kAlign, (bytes + kAlign - 1) / kAlign * kAlign);
    if (!p) throw_runtime("cannot allocate {} bytes of host memory", bytes);
    // Touched now, by this rank: a large allocation is fresh mmap'd memory, and until written
    // every page of it reads as the kernel's one shared zero page. A send buffer that is never
    // written (verification off) would then be read from the caches, whatever its size, and
    // large messages would look faster than they are (OSU fills its buffers; a GPU's memory
    // is always backed). Touching also places the pages on this rank's NUMA node.
    // (Volatile stores, one per page: a memset after the allocation may be folded into it.)
    for (std::size_t offset = 0; offset < bytes; offset += kAlign) {
      static_cast<volatile char*>(p)[offset] = 0;
    }
    return p;
  }
  void release(void* pointer) noexcept override { std::free(pointer); }

  void fill(void* destination, const FillSpec& spec) override { host_fill(destination, spec); }
  void poison(void* destination, DType dtype, std::size_t count) override {
    for (std::size_t i = 0; i < count; ++i) pattern::store_poison(destination, i, dtype);
  }
  VerifyResult verify(const void* data, const VerifySpec& spec) override {
    return host_verify(data, spec);
  }
  void synchronize() override {}
  std::unique_ptr<Timer> make_timer(std::size_t slots) override {
    return std::make_unique<HostTimer>(slots);
  }

 private:
  int ranks_on_host_;
};

}  // namespace

void host_fill(void* destination, const FillSpec& spec) {
  for (std::size_t i = 0; i < spec.count; ++i) {
    pattern::store(destination, i, spec.key.dtype, pattern::input_value(spec.key, spec.rank, i));
  }
}

VerifyResult host_verify(const void* data, const VerifySpec& spec) {
  VerifyResult result;
  for (std::size_t j = 0; j < spec.count; ++j) {
    double tolerance = 0;
    const double expected = pattern::expected_value(spec, j, &tolerance);
    const double got = pattern::load(data, j, spec.key.dtype);
    if (!pattern::matches(got, expected, tolerance)) {
      if (result.wrong == 0) {
        result.first_index = j;
        result.first_expected = expected;
        result.first_got = got;
      }
      ++result.wrong;
    }
  }
  return result;
}

std::unique_ptr<Device> make_host_device(int ranks_on_host) {
  return std::make_unique<HostDevice>(ranks_on_host);
}

}  // namespace collbench
