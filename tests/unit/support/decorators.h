// Fault injection for runner tests: a backend and a device that forward to real ones and let a
// test corrupt outputs, drop writes, slow a rank's clock, shrink memory or refuse a dtype.
#pragma once

#include <functional>
#include <memory>
#include <optional>

#include "collbench/backend.h"
#include "collbench/pattern.h"

namespace collbench::testing {

/// Forwards everything; `scale` multiplies every measured interval (a "slow" rank).
class ScaledDevice : public Device {
 public:
  ScaledDevice(Device& inner, double scale, std::size_t available)
      : inner_(inner), scale_(scale), available_(available) {}
  DeviceInfo info() const override { return inner_.info(); }
  MemoryKind memory_kind() const override { return inner_.memory_kind(); }
  std::size_t available_bytes() const override {
    return available_ ? available_ : inner_.available_bytes();
  }
  void* allocate(std::size_t bytes) override { return inner_.allocate(bytes); }
  void release(void* p) noexcept override { inner_.release(p); }
  void fill(void* d, const FillSpec& s) override { inner_.fill(d, s); }
  void poison(void* d, DType t, std::size_t n) override { inner_.poison(d, t, n); }
  VerifyResult verify(const void* d, const VerifySpec& s) override { return inner_.verify(d, s); }
  void synchronize() override { inner_.synchronize(); }
  std::unique_ptr<Timer> make_timer(std::size_t slots) override {
    return std::make_unique<ScaledTimer>(inner_.make_timer(slots), scale_);
  }

 private:
  class ScaledTimer : public Timer {
   public:
    ScaledTimer(std::unique_ptr<Timer> inner, double scale)
        : inner_(std::move(inner)), scale_(scale) {}
    void record(std::size_t slot) override { inner_->record(slot); }
    void synchronize() override { inner_->synchronize(); }
    double seconds(std::size_t a, std::size_t b) const override {
      return inner_->seconds(a, b) * scale_;
    }
    std::size_t capacity() const override { return inner_->capacity(); }

   private:
    std::unique_ptr<Timer> inner_;
    double scale_;
  };
  Device& inner_;
  double scale_;
  std::size_t available_;
};

/// What a test wants to break on this rank.
struct Faults {
  /// Flip output element `corrupt_index` after every operation of this primitive.
  std::optional<Primitive> corrupt;
  std::size_t corrupt_index = 0;
  /// Let the library write into scratch memory instead of the output (output never written).
  std::optional<Primitive> drop_output;
  double clock_scale = 1.0;
  std::size_t available_bytes = 0;  ///< 0: the real amount
  std::optional<DType> refuse_dtype;
  /// Refuse a primitive in every dtype (a backend without that operation, as ofi's collectives).
  std::optional<Primitive> refuse_primitive;
  /// What the "library" says it ran each row with (Backend::ran_with), as NCCL's log would.
  std::function<std::optional<RowAlgorithm>(std::string_view test, std::uint64_t bytes)> algorithm;
};

class FaultyBackend : public Backend {
 public:
  FaultyBackend(std::unique_ptr<Backend> inner, Faults faults)
      : inner_(std::move(inner)),
        faults_(faults),
        device_(inner_->device(), faults.clock_scale, faults.available_bytes) {}
  const BackendInfo& info() const override { return inner_->info(); }
  Device& device() override { return device_; }
  std::optional<std::string> unsupported(Primitive p, DType t, ReduceOp op) const override {
    if (faults_.refuse_dtype == t) return "refused by the test";
    if (faults_.refuse_primitive == p) return "no such operation in the test backend";
    return inner_->unsupported(p, t, op);
  }
  void submit(const CollArgs& args) override {
    CollArgs a = args;
    std::vector<char> scratch;
    if (faults_.drop_output == a.primitive) {
      scratch.resize(1 << 22);
      a.recv = scratch.data();
    }
    inner_->submit(a);
    if (faults_.corrupt == a.primitive && a.recv && a.count > faults_.corrupt_index) {
      const double v = pattern::load(a.recv, faults_.corrupt_index, a.dtype);
      pattern::store(a.recv, faults_.corrupt_index, a.dtype, v + 1);
    }
  }
  void group_begin() override { inner_->group_begin(); }
  void group_end() override { inner_->group_end(); }
  void synchronize() override { inner_->synchronize(); }
  std::optional<RowAlgorithm> ran_with(std::string_view test, std::uint64_t bytes) override {
    return faults_.algorithm ? faults_.algorithm(test, bytes) : std::nullopt;
  }

 private:
  std::unique_ptr<Backend> inner_;
  Faults faults_;
  ScaledDevice device_;
};

}  // namespace collbench::testing
