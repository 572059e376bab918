// The exit code of collect comes from the failure kinds the manifest records, for manifests of
// this version and of versions before "failure" existed.
#include "collbench/sweep/commands.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace collbench::sweep {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSchema = R"("schema":{"name":"collbench-sweep-manifest","version":1})";

// A failed event of run `run` with this reason and, unless empty, this failure kind.
std::string failed(const std::string& run, const std::string& reason,
                   const std::string& failure = "") {
  const std::string kind = failure.empty() ? "" : R"(,"failure":")" + failure + "\"";
  return R"({"event":"failed","run":")" + run + R"(","job_id":"1","reason":")" + reason + "\"" +
         kind + "," + kSchema + "}";
}

std::string collected(const std::string& run) {
  return R"({"event":"collected","run":")" + run + R"(","job_id":"1","file":")" + run +
         R"(.jsonl","results":1,"wrong":0,"bad_lines":0,)" + kSchema + "}";
}

const std::string kFirst = "default-n1x1-default-r0";
const std::string kSecond = "default-n2x1-default-r0";

class CollectExitCode : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("collbench-commands-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(dir_ / "c.yaml") << "campaign: old\ntests: [all_reduce]\nbackend: mpi\n"
                                      "nodes: [1, 2]\n";
    settings_.campaign_file = dir_ / "c.yaml";
    settings_.results_root = dir_ / "results";
    settings_.out = out_ = std::tmpfile();
  }
  void TearDown() override {
    std::fclose(out_);
    fs::remove_all(dir_);
  }

  // collect over a manifest of these lines (no run is in flight, so no Slurm command runs).
  int collect_with(const std::vector<std::string>& lines) {
    const auto manifest = dir_ / "results" / "old" / "manifest.jsonl";
    fs::create_directories(manifest.parent_path());
    std::ofstream out(manifest);
    for (const auto& line : lines) out << line << "\n";
    out.close();
    return collect(settings_);
  }

  fs::path dir_;
  std::FILE* out_ = nullptr;
  SweepSettings settings_;
};

TEST_F(CollectExitCode, LegacyWrongResultsStillExit1) {
  EXPECT_EQ(collect_with({failed(kFirst,
                                 "wrong results: 3 mismatched elements (collbench exit "
                                 "status 1) (see x.out)"),
                          collected(kSecond)}),
            1);
}

TEST_F(CollectExitCode, LegacyRuntimeFailureExits3) {
  EXPECT_EQ(collect_with({failed(kFirst, "wrong results: 3 mismatched elements"),
                          failed(kSecond, "cancelled: the job was cancelled")}),
            3);
}

TEST_F(CollectExitCode, TheKindDecidesNotTheText) {
  EXPECT_EQ(
      collect_with({failed(kFirst, "3 elements differ", "wrong_results"), collected(kSecond)}), 1);
  EXPECT_EQ(collect_with({failed(kFirst, "wrong results: 3 mismatched elements", "non_zero_exit"),
                          collected(kSecond)}),
            3);
}

TEST_F(CollectExitCode, NoFailureExits0) {
  EXPECT_EQ(collect_with({collected(kFirst), collected(kSecond)}), 0);
}

}  // namespace
}  // namespace collbench::sweep
