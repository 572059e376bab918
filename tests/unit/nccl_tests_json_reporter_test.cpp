// nccl-tests' -J JSON for a job whose processes each run several ranks (-t, -g): the config says
// so as nccl-tests does, and lists one device per process (its first rank's), which is what
// nccl-tests' own readers and collbench-report count ranks from.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "collbench/cli.h"
#include "collbench/reporter.h"

namespace collbench {
namespace {

TEST(NcclTestsJson, OneDevicePerProcessWithItsThreadsAndGpus) {
  const std::string path = ::testing::TempDir() + "collbench-nccl-tests-threads.json";
  std::remove(path.c_str());
  Options o;
  o.threads_per_process = 2;
  o.gpus_per_thread = 2;
  RunContext c;
  c.nranks = 8;
  for (int r = 0; r < 8; ++r) {
    RankRecord rank;
    rank.rank = r;
    rank.host = r < 4 ? "node1" : "node2";
    rank.local_rank = r % 4;
    rank.pid = 100 + r / 4;
    rank.device.index = r % 4;
    rank.device.model = "NVIDIA H100 80GB HBM3";
    c.ranks.push_back(rank);
  }
  {
    auto reporter = make_nccl_tests_json_reporter(path, o);
    reporter->context(c);
    reporter->finish(RunTotals{});
  }
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const auto doc = nlohmann::json::parse(text.str());
  const auto& config = doc["config"];
  EXPECT_EQ(config["nthreads"], 2);
  EXPECT_EQ(config["ngpus"], 2);
  EXPECT_EQ(config["parallel_init"], "true");
  ASSERT_EQ(config["devices"].size(), 2u);
  EXPECT_EQ(config["devices"][0]["rank"], 0);
  EXPECT_EQ(config["devices"][0]["hostname"], "node1");
  EXPECT_EQ(config["devices"][1]["rank"], 4);
  EXPECT_EQ(config["devices"][1]["hostname"], "node2");
  EXPECT_EQ(config["devices"][1]["pid"], 101);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace collbench
