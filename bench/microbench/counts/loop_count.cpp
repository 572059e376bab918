// collbench-loop-count: collbench's own work per operation, for an instruction count that does
// not depend on the machine (scripts/instruction-counts runs it under callgrind).
//
//   collbench-loop-count batch|blocking N
//
// Drives exactly the loops the runner times (run_iterations for the headline batch, run_blocking
// for -z 1) N times over a backend that does nothing: what is left is collbench's per-operation
// cost (the plan's buffer positions, the spec's arguments, the backend call, the watchdog's
// progress, the timer records of -z), without MPI's, whose count depends on its transports.
// The counts of two N differ by N2 - N1 operations exactly: the start-up cancels out.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "collbench/bootstrap.h"
#include "collbench/host_device.h"
#include "collbench/runner.h"
#include "collectives/collectives.h"

namespace collbench {
namespace {

/// A backend whose operations complete at once without touching memory.
class NullBackend final : public Backend {
 public:
  NullBackend() : device_(make_host_device(1)) {
    info_.name = "null";
    info_.library = "none";
  }
  const BackendInfo& info() const override { return info_; }
  Device& device() override { return *device_; }
  std::optional<std::string> unsupported(Primitive, DType, ReduceOp) const override {
    return std::nullopt;
  }
  void submit(const CollArgs& args) override { last_ = args.count; }
  void group_begin() override {}
  void group_end() override {}
  void synchronize() override {}
  std::size_t last() const { return last_; }

 private:
  std::unique_ptr<Device> device_;
  BackendInfo info_;
  std::size_t last_ = 0;
};

}  // namespace
}  // namespace collbench

int main(int argc, char** argv) {
  using namespace collbench;
  if (argc != 3 || (std::strcmp(argv[1], "batch") != 0 && std::strcmp(argv[1], "blocking") != 0)) {
    std::fprintf(stderr, "usage: collbench-loop-count batch|blocking OPERATIONS\n");
    return 2;
  }
  const bool blocking = std::strcmp(argv[1], "blocking") == 0;
  const int operations = std::atoi(argv[2]);
  NullBackend backend;
  // One rank: -z 1's barriers between operations return at once.
  const auto bootstrap = make_single_process_bootstrap();
  constexpr std::size_t kBytes = 8;
  DeviceBuffer send(backend.device(), kBytes), recv(backend.device(), kBytes);
  IterationPlan plan;
  plan.spec = &all_reduce_spec();
  plan.layout = plan.spec->layout(kBytes / sizeof(float), 1, sizeof(float));
  plan.send = send.at(0);
  plan.recv = recv.at(0);
  const auto timer = backend.device().make_timer(2 * static_cast<std::size_t>(operations) + 2);
  if (blocking) {
    run_blocking(plan, backend, *bootstrap, *timer, 1, operations, nullptr);
  } else {
    run_iterations(plan, backend, 0, operations, nullptr, 0, nullptr);
  }
  return backend.last() == plan.layout.param_count ? 0 : 1;
}
