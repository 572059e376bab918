// Device: the memory a backend's buffers live in, pattern fill and verification, and timers.
// Host memory and CUDA memory implement it (kernels/); the runner only sees this interface.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "collbench/context.h"
#include "collbench/pattern_spec.h"
#include "collbench/types.h"

namespace collbench {

/// What a rank's device is: the run context's record of it (model, driver, PCI bus id, ...).
using DeviceInfo = DeviceRecord;

/// Result of verifying one output buffer.
struct VerifyResult {
  std::uint64_t wrong = 0;  ///< elements that did not match
  std::uint64_t first_index = 0;
  double first_expected = 0.0;
  double first_got = 0.0;
};

/// Timestamps recorded in the order operations were submitted. For stream-ordered backends a
/// record sits in the stream (CUDA events); for host-blocking ones it reads the clock. No record
/// is ever placed between the operations of a headline batch: even a clock read (~20 ns) is a
/// measurable share of an 8-byte operation.
class Timer {
 public:
  virtual ~Timer() = default;
  /// Records timestamp `slot`: it completes when everything submitted before it has completed.
  virtual void record(std::size_t slot) = 0;
  /// Waits until every recorded timestamp is available.
  virtual void synchronize() = 0;
  /// Seconds between two recorded slots.
  virtual double seconds(std::size_t from, std::size_t to) const = 0;
  virtual std::size_t capacity() const = 0;
};

class Device {
 public:
  virtual ~Device() = default;

  virtual DeviceInfo info() const = 0;
  virtual MemoryKind memory_kind() const = 0;
  /// Bytes this rank can still allocate (host: its share of the host's available memory).
  virtual std::size_t available_bytes() const = 0;

  virtual void* allocate(std::size_t bytes) = 0;
  virtual void release(void* pointer) noexcept = 0;

  /// Writes the input pattern: element i = pattern::input_value(spec.params, spec.rank, i).
  virtual void fill(void* destination, const FillSpec& spec) = 0;
  /// Writes the poison value into `count` elements, so unwritten output cannot pass.
  virtual void poison(void* destination, DType dtype, std::size_t count) = 0;
  /// Compares `count` elements against the expected pattern.
  virtual VerifyResult verify(const void* data, const VerifySpec& spec) = 0;
  /// Waits for fill/poison work queued on the device.
  virtual void synchronize() = 0;

  virtual std::unique_ptr<Timer> make_timer(std::size_t slots) = 0;

  /// CUDA-graph capture of the operations submitted between begin and end (stream-ordered
  /// devices only); launch replays the captured work once.
  virtual bool supports_graphs() const { return false; }
  virtual void begin_capture() {}
  virtual void end_capture() {}
  virtual void launch_graph() {}
  virtual void destroy_graph() {}
};

/// Owns one allocation on a device.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(Device& device, std::size_t bytes)
      : device_(&device), pointer_(bytes ? device.allocate(bytes) : nullptr), bytes_(bytes) {}
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept { *this = std::move(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    reset();
    device_ = other.device_;
    pointer_ = other.pointer_;
    bytes_ = other.bytes_;
    other.pointer_ = nullptr;
    other.bytes_ = 0;
    return *this;
  }
  ~DeviceBuffer() { reset(); }

  void* data() const { return pointer_; }
  std::size_t bytes() const { return bytes_; }
  char* at(std::size_t offset) const { return static_cast<char*>(pointer_) + offset; }

 private:
  void reset() {
    if (pointer_) device_->release(pointer_);
    pointer_ = nullptr;
  }
  Device* device_ = nullptr;
  void* pointer_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace collbench
