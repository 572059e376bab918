// A fixture host tree for the doctor's tests: fixtures/make_trees.py writes a host's /sys and
// /proc into a fresh directory, removed again when the test ends.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "collbench/doctor/system_facts.h"

namespace collbench::doctor::testing {

/// Where to read: `root`, with NCCL_CONF_FILE and the home directory NCCL would use.
inline SystemPaths paths(const std::filesystem::path& root, std::string conf_file = "",
                         std::string home = "") {
  SystemPaths where;
  where.root = root;
  where.nccl_conf_file = std::move(conf_file);
  where.home = std::move(home);
  return where;
}

class FixtureTree {
 public:
  /// `host` is p5, p4d, g5 or ib; `options` are make_trees.py's ("--gpus 7 --no-peermem").
  explicit FixtureTree(std::string_view host, std::string_view options = "") {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = std::filesystem::path(::testing::TempDir()) /
            ("doctor-" + std::string(host) + "-" + std::to_string(getpid()) + "-" +
             (test != nullptr ? std::string(test->name()) : std::string("tree")) + "-" +
             std::to_string(counter_++));
    std::filesystem::remove_all(root_);
    const std::string command = std::string("'") + COLLBENCH_DOCTOR_PYTHON + "' '" +
                                COLLBENCH_DOCTOR_MAKE_TREES + "' " + std::string(host) + " '" +
                                root_.string() + "' " + std::string(options);
    const int status = std::system(command.c_str());
    if (status != 0) ADD_FAILURE() << "make_trees.py failed (" << status << "): " << command;
  }
  ~FixtureTree() {
    std::error_code ignored;
    std::filesystem::remove_all(root_, ignored);
  }
  FixtureTree(const FixtureTree&) = delete;
  FixtureTree& operator=(const FixtureTree&) = delete;

  const std::filesystem::path& root() const { return root_; }

  /// Writes `text` at host path `path` inside the tree.
  void write(std::string_view path, std::string_view text) const {
    const auto full = root_ / std::string(path.substr(path.starts_with('/') ? 1 : 0));
    std::filesystem::create_directories(full.parent_path());
    std::ofstream(full) << text;
  }

 private:
  static inline int counter_ = 0;
  std::filesystem::path root_;
};

}  // namespace collbench::doctor::testing
