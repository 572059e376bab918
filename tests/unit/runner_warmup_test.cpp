// The warm-up check end to end: a backend whose operations keep getting faster well past the
// warm-up gets a note in its row, saying how many warm-up iterations it needed, and the console
// one line per test with the most any of its measurements needed.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "collbench/preflight.h"
#include "collbench/runner.h"
#include "collectives/collectives.h"
#include "thread_world.h"

namespace collbench {
namespace {

class NotesReporter : public Reporter {
 public:
  void context(const RunContext&) override {}
  void row(const ResultRow& row) override { rows.push_back(row); }
  void note(std::string_view text) override { notes.emplace_back(text); }
  std::vector<ResultRow> rows;
  std::vector<std::string> notes;
};

// Slow at first: the k-th operation takes (kSlowCalls − k) × kSlowStep more than the others,
// then none. The times are planted, on a clock of the backend's own that its device's timers
// read: on the machine's clock a loaded machine adds milliseconds to a thread rank's operation
// (a wait for the peer's time slice), which hid a trend of 40 µs steps, and would hide one of
// any step a unit test can afford to sleep through.
constexpr int kSlowCalls = 60;
constexpr double kSlowStep = 40e-6;
constexpr double kOperation = 10e-6;

/// Seconds on the planted clock: advanced by the backend's operations, read by its timers.
struct PlantedClock {
  double now = 0;
};

class PlantedTimer : public Timer {
 public:
  PlantedTimer(const PlantedClock& clock, std::size_t slots) : clock_(clock), stamps_(slots) {}
  void record(std::size_t slot) override { stamps_.at(slot) = clock_.now; }
  void synchronize() override {}
  double seconds(std::size_t from, std::size_t to) const override {
    return stamps_.at(to) - stamps_.at(from);
  }
  std::size_t capacity() const override { return stamps_.size(); }

 private:
  const PlantedClock& clock_;
  std::vector<double> stamps_;
};

/// The thread world's host device, with timers on the planted clock.
class PlantedDevice : public Device {
 public:
  PlantedDevice(Device& inner, const PlantedClock& clock) : inner_(inner), clock_(clock) {}
  DeviceInfo info() const override { return inner_.info(); }
  MemoryKind memory_kind() const override { return inner_.memory_kind(); }
  std::size_t available_bytes() const override { return inner_.available_bytes(); }
  void* allocate(std::size_t bytes) override { return inner_.allocate(bytes); }
  void release(void* pointer) noexcept override { inner_.release(pointer); }
  void fill(void* destination, const FillSpec& spec) override { inner_.fill(destination, spec); }
  void poison(void* destination, DType dtype, std::size_t count) override {
    inner_.poison(destination, dtype, count);
  }
  VerifyResult verify(const void* data, const VerifySpec& spec) override {
    return inner_.verify(data, spec);
  }
  void synchronize() override { inner_.synchronize(); }
  std::unique_ptr<Timer> make_timer(std::size_t slots) override {
    return std::make_unique<PlantedTimer>(clock_, slots);
  }

 private:
  Device& inner_;
  const PlantedClock& clock_;
};

class SlowStartBackend : public Backend {
 public:
  explicit SlowStartBackend(std::unique_ptr<Backend> inner)
      : inner_(std::move(inner)), device_(inner_->device(), clock_) {}
  const BackendInfo& info() const override { return inner_->info(); }
  Device& device() override { return device_; }
  std::optional<std::string> unsupported(Primitive p, DType t, ReduceOp op) const override {
    return inner_->unsupported(p, t, op);
  }
  void submit(const CollArgs& args) override {
    clock_.now += kOperation + (calls_ < kSlowCalls ? kSlowStep * (kSlowCalls - calls_) : 0);
    ++calls_;
    inner_->submit(args);
  }
  void group_begin() override { inner_->group_begin(); }
  void group_end() override { inner_->group_end(); }
  void synchronize() override { inner_->synchronize(); }

 private:
  std::unique_ptr<Backend> inner_;
  PlantedClock clock_;
  PlantedDevice device_;
  int calls_ = 0;
};

TEST(RunnerWarmup, OperationsStillGettingFasterAreNotedWithTheWarmupTheyNeeded) {
  Options o;
  o.tests = {"all_reduce"};
  o.min_bytes = o.max_bytes = 8;
  o.iters = 40;
  o.warmup = 1;
  o.check = 0;
  o.timeout_s = 0;
  const std::vector<const CollectiveSpec*> specs{find_spec(all_specs(), "all_reduce")};
  testing::ThreadWorld world(2);
  NotesReporter collected;
  world.run([&](int rank) {
    auto bootstrap = world.make_bootstrap(rank);
    SlowStartBackend backend(world.make_backend(rank));
    NotesReporter ignored;
    Reporter& reporter = rank == 0 ? static_cast<Reporter&>(collected) : ignored;
    preflight(o, *bootstrap, backend, specs);
    Runner runner(o, *bootstrap, backend, reporter, nullptr, "0123456789abcdef");
    runner.run(specs);
  });
  // Out-of-place first (the slow start), then in-place.
  ASSERT_EQ(collected.rows.size(), 2u);
  const std::string note = collected.rows[0].note.str();
  EXPECT_NE(note.find("warm-up too short"), std::string::npos) << note;
  // One console line for the test, however many of its measurements were short.
  int on_console = 0;
  for (const auto& n : collected.notes) on_console += n.find("warm-up too short") != n.npos;
  EXPECT_EQ(on_console, 1);
  // The operations settle after about 60 calls: the warm-up, the 40 of the headline batch, and
  // some 19 of the sampled pass.
  const auto at = note.find("(-w ");
  ASSERT_NE(at, std::string::npos) << note;
  const int needed = std::stoi(note.substr(at + 4));
  EXPECT_GE(needed, 45) << note;
  EXPECT_LE(needed, 75) << note;
  // The line names the most any row needed.
  int most = 0;
  for (const auto& row : collected.rows) {
    const std::string text = row.note.str();
    if (const auto w = text.find("(-w "); w != std::string::npos)
      most = std::max(most, std::stoi(text.substr(w + 4)));
  }
  const std::string& line = collected.notes.back();
  EXPECT_EQ(line.rfind("all_reduce: warm-up too short in ", 0), 0u) << line;
  EXPECT_NE(line.find(fmt::format("): -w {}", most)), std::string::npos) << line;
}

}  // namespace
}  // namespace collbench
