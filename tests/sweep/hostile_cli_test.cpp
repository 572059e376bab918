// collbench-sweep's command line under hostile arguments: unknown subcommands and options named as
// such with the one meant, numbers outside their stated bounds (NaN and infinity included), empty
// paths, and control characters that would break the one-line message.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collbench/error.h"
#include "collbench/sweep/cli.h"

// A namespace of its own: the file compiles in one batch with the others (unity build).
namespace collbench::sweep::hostile_cli_tests {
namespace {

// The message of a command line refused with exit code 2, checked to be one line.
std::string usage_error(std::vector<const char*> args) {
  args.insert(args.begin(), "collbench-sweep");
  try {
    parse_command_line(static_cast<int>(args.size()), args.data(), CampaignRules{});
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage) << e.what();
    const std::string m = e.what();
    EXPECT_EQ(m.find('\n'), std::string::npos) << "one line: " << m;
    return m;
  }
  ADD_FAILURE() << "accepted";
  return "";
}

TEST(HostileSweepCli, AnUnknownSubcommandIsCalledUnknownWithTheOneMeant) {
  std::string m = usage_error({"pla", "c.yaml"});
  EXPECT_NE(m.find("unknown subcommand 'pla'; did you mean 'plan'?"), std::string::npos) << m;
  m = usage_error({"sumbit", "c.yaml"});
  EXPECT_NE(m.find("did you mean 'submit'?"), std::string::npos) << m;
  m = usage_error({"frobnicate", "c.yaml"});
  EXPECT_NE(m.find("unknown subcommand 'frobnicate'; the subcommands are plan, submit, status, "
                   "wait, collect, run"),
            std::string::npos)
      << m;
  EXPECT_EQ(m.find("required"), std::string::npos) << m;
  m = usage_error({"pl\nan", "c.yaml"});
  EXPECT_NE(m.find("'pl\\x0aan'"), std::string::npos) << m;
  // No subcommand at all is still said as such.
  EXPECT_NE(usage_error({}).find("subcommand"), std::string::npos);
}

TEST(HostileSweepCli, AnUnknownOptionIsNamedWithTheOneMeant) {
  std::string m = usage_error({"plan", "c.yaml", "--resluts", "out"});
  EXPECT_NE(m.find("plan does not take --resluts; did you mean --results?"), std::string::npos)
      << m;
  m = usage_error({"run", "--lcoal", "c.yaml"});
  EXPECT_NE(m.find("did you mean --local?"), std::string::npos) << m;
  m = usage_error({"status", "c.yaml", "--frobnicate=1"});
  EXPECT_NE(m.find("status does not take --frobnicate; its options are"), std::string::npos) << m;
  EXPECT_NE(m.find("run collbench-sweep --help"), std::string::npos) << m;
}

TEST(HostileSweepCli, SecondsOutsideTheirStatedBoundsAreRefused) {
  for (const char* bad : {"nan", "inf", "-1", "1e400", "2592001"}) {
    const std::string m = usage_error({"wait", "c.yaml", "--timeout", bad});
    EXPECT_NE(m.find("must be from 0 to 2592000 seconds"), std::string::npos) << bad << ": " << m;
  }
  for (const char* bad : {"0", "0.01", "nan", "-inf", "3601"}) {
    const std::string m = usage_error({"wait", "c.yaml", "--interval", bad});
    EXPECT_NE(m.find("--interval"), std::string::npos) << m;
    EXPECT_NE(m.find("must be from 0.1 to 3600 seconds"), std::string::npos) << bad << ": " << m;
  }
  const std::string m = usage_error({"collect", "c.yaml", "--lock-timeout", "nan"});
  EXPECT_NE(m.find("--lock-timeout nan"), std::string::npos) << m;
}

TEST(HostileSweepCli, EmptyPathsAreRefusedNotTakenAsTheDefault) {
  EXPECT_NE(usage_error({"plan", ""}).find("the campaign file name is empty"), std::string::npos);
  for (const auto& [args, option] : std::vector<std::pair<std::vector<const char*>, std::string>>{
           {{"plan", "c.yaml", "--results", ""}, "--results ''"},
           {{"plan", "c.yaml", "--collbench", ""}, "--collbench ''"},
           {{"submit", "c.yaml", "--template", ""}, "--template ''"},
           {{"run", "--local", "c.yaml", "--mpirun", ""}, "--mpirun ''"},
           {{"hunt", "--nodes", "", "-o", "x"}, "--nodes ''"}}) {
    const std::string m = usage_error(args);
    EXPECT_NE(m.find(option + ": an empty value"), std::string::npos) << m;
  }
  EXPECT_NE(usage_error({"plan", "c.yaml", "--collbench="}).find("--collbench"), std::string::npos);
}

}  // namespace
}  // namespace collbench::sweep::hostile_cli_tests
