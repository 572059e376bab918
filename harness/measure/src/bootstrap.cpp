#include "collbench/bootstrap.h"

#include <fmt/format.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>

namespace collbench {
namespace {

/// Rank 0 of 1: every collective is the identity.
class SingleProcessBootstrap final : public Bootstrap {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int local_rank() const override { return 0; }
  int local_size() const override { return 1; }
  int node_count() const override { return 1; }
  std::string hostname() const override {
    char name[HOST_NAME_MAX + 1] = {};
    gethostname(name, sizeof(name) - 1);
    return name;
  }
  std::string runtime_version() const override { return "none (single process)"; }
  void barrier() override {}
  void broadcast(std::string&, int) override {}
  std::vector<std::string> allgather(const std::string& bytes) override { return {bytes}; }
  std::vector<std::string> gather(const std::string& bytes, int) override { return {bytes}; }
  double allreduce(double value, ScalarOp) override { return value; }
  std::unique_ptr<Bootstrap> split(int color, int) override {
    if (color < 0) return nullptr;
    return std::make_unique<SingleProcessBootstrap>();
  }
  [[noreturn]] void abort(int code, const std::string&) override { std::_Exit(code); }
};

}  // namespace

std::unique_ptr<Bootstrap> make_single_process_bootstrap() {
  return std::make_unique<SingleProcessBootstrap>();
}

std::vector<std::string> gather_hostnames(Bootstrap& bootstrap) {
  return allgather(bootstrap, bootstrap.hostname(), "host names");
}

}  // namespace collbench
