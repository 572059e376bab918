// Ranks given different command lines are refused at start-up, on every rank alike.
#include "collbench/agreement.h"

#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <vector>

#include "backends/catalog.h"
#include "collbench/error.h"
#include "collectives/collectives.h"
#include "thread_world.h"

namespace collbench {
namespace {

using testing::ThreadWorld;

/// Parses each rank's arguments as collbench does and agrees; returns every rank's outcome:
/// "" when the ranks agreed, else the usage error (the code must be kUsage).
std::vector<std::string> agree(const std::vector<std::vector<const char*>>& per_rank) {
  ThreadWorld world(static_cast<int>(per_rank.size()));
  std::vector<std::string> outcome(per_rank.size());
  std::mutex mutex;
  world.run([&](int rank) {
    auto bootstrap = world.make_bootstrap(rank);
    std::vector<const char*> argv{"collbench"};
    const auto& mine = per_rank[static_cast<std::size_t>(rank)];
    argv.insert(argv.end(), mine.begin(), mine.end());
    ParseResult parsed;
    std::string usage_error;
    try {
      parsed = parse_command_line(static_cast<int>(argv.size()), argv.data(), all_specs(),
                                  backend_catalog());
    } catch (const Error& e) {
      usage_error = e.what();
    }
    std::string result;
    try {
      agree_on_command_line(*bootstrap, parsed, usage_error);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kUsage);
      result = e.what();
    }
    std::lock_guard lock(mutex);
    outcome[static_cast<std::size_t>(rank)] = result;
  });
  return outcome;
}

TEST(Agreement, SameOptionsInAnySpellingAgree) {
  const auto outcome = agree({{"all_reduce", "-b", "8", "-e", "1M", "-R", "1"},
                              {"all_reduce", "-b8", "--maxbytes", "1048576", "--register", "1"}});
  EXPECT_EQ(outcome, (std::vector<std::string>{"", ""}));
}

TEST(Agreement, EveryRankNamesTheRankAndTheOption) {
  const auto outcome = agree(
      {{"-b", "8", "-e", "1K"}, {"-b", "8", "-e", "1K"}, {"-b", "8", "-e", "1K", "-o", "max"}});
  for (const auto& line : outcome) {
    EXPECT_EQ(line, outcome[0]);
    EXPECT_NE(line.find("rank 2"), std::string::npos) << line;
    EXPECT_NE(line.find("-o is [\"max\"] there and [\"sum\"] on rank 0"), std::string::npos)
        << line;
  }
}

TEST(Agreement, PrecisionAndItsBudgetMustAgree) {
  auto outcome = agree({{"--precision", "1%"}, {"--precision", "2%"}});
  EXPECT_NE(outcome[0].find("--precision"), std::string::npos) << outcome[0];
  outcome = agree({{"--precision", "1%", "--max-time", "3"}, {"--precision", "0.01"}});
  EXPECT_NE(outcome[0].find("--max-time"), std::string::npos) << outcome[0];
  EXPECT_EQ(agree({{"--precision", "1%"}, {"--precision", "0.01"}}),
            (std::vector<std::string>{"", ""}));
}

TEST(Agreement, TheBufferPolicyMustAgree) {
  const auto outcome = agree({{"--buffers", "fixed"}, {"--buffers", "rotate"}});
  EXPECT_NE(outcome[0].find("--buffers"), std::string::npos) << outcome[0];
  // Given on one rank only: the other would take its backend's default, which may differ.
  EXPECT_NE(agree({{"--buffers", "rotate"}, {}})[0].find("--buffers"), std::string::npos);
  EXPECT_EQ(agree({{"--buffers", "fixed"}, {"--buffers", "fixed"}}),
            (std::vector<std::string>{"", ""}));
}

TEST(Agreement, ARankThatRefusesItsCommandLineIsNamed) {
  const auto outcome = agree({{"-n", "2"}, {"-n", "two"}});
  EXPECT_NE(outcome[0].find("rank 1 refused its command line"), std::string::npos) << outcome[0];
  EXPECT_NE(outcome[0].find("-n two"), std::string::npos) << outcome[0];
  EXPECT_EQ(outcome[1], outcome[0]);
  // Refused alike on every rank: rank 0's own line, as without agreement.
  const auto alike = agree({{"-n", "0"}, {"-n", "0"}});
  EXPECT_NE(alike[1].find("-n 0"), std::string::npos);
  EXPECT_EQ(alike[1].find("rank"), std::string::npos) << alike[1];
}

TEST(Agreement, HelpOnOneRankOnly) {
  const auto outcome = agree({{"-b", "8", "-e", "8"}, {"--help"}});
  EXPECT_NE(outcome[0].find("rank 1 was given --help"), std::string::npos) << outcome[0];
  EXPECT_EQ(agree({{"--help"}, {"--help"}}), (std::vector<std::string>{"", ""}));
}

}  // namespace
}  // namespace collbench
