// collbench-sweep's command line: every subcommand and its flags, --help and --version, and bad
// usage as one line with exit code 2.
#include "collbench/sweep/cli.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collbench/error.h"

// A namespace of its own: the file compiles in one batch with the others (unity build).
namespace collbench::sweep::cli_tests {
namespace {

CampaignRules rules() {
  CampaignRules r;
  r.known_tests = {"all_reduce"};
  r.backends = {{"nccl", true}, {"mpi", false}};
  return r;
}

ParsedCommandLine parse(std::vector<const char*> args) {
  args.insert(args.begin(), "collbench-sweep");
  return parse_command_line(static_cast<int>(args.size()), args.data(), rules());
}

SweepCommand command(std::vector<const char*> args) {
  const auto parsed = parse(std::move(args));
  EXPECT_EQ(parsed.exit_text, "");
  return parsed.command;
}

// The message of a command line that must be refused with exit code 2.
std::string usage_error(std::vector<const char*> args) {
  try {
    parse(args);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "accepted";
  return "";
}

TEST(SweepCli, EverySubcommand) {
  EXPECT_EQ(command({"plan", "c.yaml"}).subcommand, Subcommand::kPlan);
  EXPECT_EQ(command({"submit", "c.yaml"}).subcommand, Subcommand::kSubmit);
  EXPECT_EQ(command({"status", "c.yaml"}).subcommand, Subcommand::kStatus);
  EXPECT_EQ(command({"wait", "c.yaml"}).subcommand, Subcommand::kWait);
  EXPECT_EQ(command({"collect", "c.yaml"}).subcommand, Subcommand::kCollect);
  EXPECT_EQ(command({"run", "c.yaml"}).subcommand, Subcommand::kRun);
}

TEST(SweepCli, CommonOptionsAndDefaults) {
  const auto c = command({"collect", "camp.yaml", "--results", "out", "--collbench", "/b/cb",
                          "--template", "t.sbatch", "--lock-timeout", "7"});
  EXPECT_EQ(c.settings.campaign_file, "camp.yaml");
  EXPECT_EQ(c.settings.results_root, "out");
  EXPECT_EQ(c.settings.collbench, "/b/cb");
  EXPECT_EQ(c.settings.sbatch_template, "t.sbatch");
  EXPECT_EQ(c.settings.lock_timeout_s, 7);
  EXPECT_FALSE(c.settings.local);
  EXPECT_EQ(c.settings.mpirun, "mpirun");
  EXPECT_FALSE(c.settings.program_dir.empty()) << "the directory of this program";
  EXPECT_EQ(c.settings.out, stdout);
  // The caller's rules reach the settings the campaign is checked with.
  EXPECT_EQ(c.settings.rules.known_tests, std::vector<std::string>{"all_reduce"});
  ASSERT_EQ(c.settings.rules.backends.size(), 2u);
  EXPECT_TRUE(c.settings.rules.backends[0].uses_gpus);
  const auto d = command({"plan", "camp.yaml"});
  EXPECT_EQ(d.settings.lock_timeout_s, 600);
  EXPECT_TRUE(d.settings.results_root.empty());
}

TEST(SweepCli, SubcommandFlags) {
  EXPECT_TRUE(command({"plan", "--local", "c.yaml"}).settings.local);
  const auto sub = command({"submit", "--dry-run", "--retry-failed", "--array", "c.yaml"});
  EXPECT_TRUE(sub.submit.dry_run);
  EXPECT_TRUE(sub.submit.retry_failed);
  EXPECT_TRUE(sub.submit.array);
  const auto st = command({"status", "--json", "--local", "c.yaml"});
  EXPECT_TRUE(st.json);
  EXPECT_TRUE(st.settings.local);
  const auto wt = command({"wait", "--timeout", "30", "--interval", "0.5", "c.yaml"});
  EXPECT_EQ(wt.wait.timeout_s, 30);
  EXPECT_EQ(wt.wait.interval_s, 0.5);
  const auto local =
      command({"run", "--local", "--redo", "--retry-failed", "--mpirun", "/opt/mpirun", "c.yaml"});
  EXPECT_TRUE(local.settings.local);
  EXPECT_TRUE(local.local.redo);
  EXPECT_TRUE(local.local.retry_failed);
  EXPECT_TRUE(local.submit.retry_failed) << "run's --retry-failed is also submit's";
  EXPECT_EQ(local.settings.mpirun, "/opt/mpirun");
  const auto slurm = command({"run", "--dry-run", "--array", "--timeout", "9", "c.yaml"});
  EXPECT_FALSE(slurm.settings.local);
  EXPECT_TRUE(slurm.submit.dry_run);
  EXPECT_TRUE(slurm.submit.array);
  EXPECT_EQ(slurm.wait.timeout_s, 9);
}

TEST(SweepCli, HelpAndVersionAreTextToPrint) {
  const auto help = parse({"--help"});
  EXPECT_NE(help.exit_text.find("collbench-sweep"), std::string::npos);
  EXPECT_NE(help.exit_text.find("Exit codes:"), std::string::npos);
  EXPECT_NE(parse({"run", "--help"}).exit_text.find("--retry-failed"), std::string::npos);
  const auto version = parse({"--version"});
  EXPECT_FALSE(version.exit_text.empty());
  EXPECT_EQ(version.exit_text.back(), '\n');
}

TEST(SweepCli, BadUsageIsOneLineWithExitCode2) {
  for (const auto& args :
       std::vector<std::vector<const char*>>{{},
                                             {"frobnicate", "c.yaml"},
                                             {"plan"},
                                             {"plan", "c.yaml", "--bogus"},
                                             {"submit", "--local", "c.yaml"},
                                             {"wait", "--timeout", "soon", "c.yaml"},
                                             {"plan", "a.yaml", "b.yaml"}}) {
    const std::string message = usage_error(args);
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    EXPECT_NE(message.find("run collbench-sweep --help"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace collbench::sweep::cli_tests
