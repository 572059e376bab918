// How a job ended, from Slurm's word and the files it left; labelling results; scontrol parsing.
#include "collbench/sweep/collect.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "collbench/context.h"
#include "collbench/record.h"
#include "collbench/result.h"
#include "collbench/sweep/slurm.h"

namespace collbench::sweep {
namespace {

namespace fs = std::filesystem;
using Kind = Outcome::Kind;

// A context line as collbench writes it.
std::string context_line(const std::string& labels = "") {
  RunContext c;
  c.run_id = "0123456789abcdef";
  nlohmann::json j = to_json(c);
  if (!labels.empty()) j["labels"] = nlohmann::json::parse(labels);
  return j.dump() + "\n";
}

// A result line as collbench writes it, with `wrong` mismatched elements (null: not checked).
std::string result_line(std::optional<std::int64_t> wrong, double busbw = 1) {
  ResultRow r;
  r.run_id = Name("0123456789abcdef");
  r.test = Name("all_reduce");
  r.backend = Name("mpi");
  r.bytes = 1024;
  r.count = 256;
  r.nranks = 2;
  r.nodes = 2;
  r.iterations = 20;
  r.warmup = 5;
  r.time_us = RowTimes{};
  r.time_us->reported = 10;
  r.algbw_gbps = busbw;
  r.busbw_gbps = busbw;
  if (wrong) r.wrong = *wrong;
  return to_json(r).dump() + "\n";
}

class JobFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("collbench-collect-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "job-7");
    files_ = JobFiles{dir_ / "slurm-7.out", dir_ / "job-7" / "collbench.jsonl.raw"};
  }
  void TearDown() override { fs::remove_all(dir_); }

  void write(const fs::path& p, const std::string& text) {
    std::ofstream(p, std::ios::binary) << text;
  }
  void results(int rows, int wrong = 0) {
    std::ofstream out(files_.raw_jsonl);
    out << context_line();
    for (int i = 0; i < rows; ++i) out << result_line(wrong);
  }
  void exit_status(int code) { write(dir_ / "job-7" / "exit_status", std::to_string(code) + "\n"); }

  JobState slurm(const std::string& state) {
    return JobState{"7", state, "0:05", "node[1-2]", "None", std::nullopt};
  }

  fs::path dir_;
  JobFiles files_;
};

TEST_F(JobFilesTest, PendingAndRunningComeFromSlurm) {
  auto pending = slurm("PENDING");
  pending.reason = "Resources";
  const auto p = job_outcome(pending, files_);
  EXPECT_EQ(p.kind, Kind::kWaiting);
  EXPECT_EQ(p.detail, "PENDING (Resources)");
  const auto r = job_outcome(slurm("RUNNING"), files_);
  EXPECT_EQ(r.kind, Kind::kRunning);
  EXPECT_EQ(r.detail, "RUNNING for 0:05 on node[1-2]");
  EXPECT_EQ(job_outcome(slurm("COMPLETING"), files_).kind, Kind::kRunning);
}

TEST_F(JobFilesTest, CompletedWithResultsSucceeds) {
  results(3);
  exit_status(0);
  const auto o = job_outcome(slurm("COMPLETED"), files_);
  EXPECT_EQ(o.kind, Kind::kSucceeded) << o.detail;
  // Also when Slurm has forgotten the job: the files say it all.
  EXPECT_EQ(job_outcome(std::nullopt, files_).kind, Kind::kSucceeded);
}

TEST_F(JobFilesTest, SlurmVerdictsWin) {
  results(1);
  exit_status(3);  // what the template may still write while being killed
  EXPECT_EQ(job_outcome(slurm("TIMEOUT"), files_).detail.rfind("timeout:", 0), 0u);
  EXPECT_EQ(job_outcome(slurm("CANCELLED"), files_).detail.rfind("cancelled:", 0), 0u);
  EXPECT_EQ(job_outcome(slurm("NODE_FAIL"), files_).detail.rfind("node failure:", 0), 0u);
  EXPECT_EQ(job_outcome(slurm("OUT_OF_MEMORY"), files_).kind, Kind::kFailed);
}

TEST_F(JobFilesTest, OutputMessagesWhenSlurmForgot) {
  write(files_.output,
        "# header\nslurmstepd: error: *** JOB 7 ON node1 CANCELLED AT 2024-05-01T10:00:00 DUE TO "
        "TIME LIMIT ***\n");
  auto o = job_outcome(std::nullopt, files_);
  EXPECT_EQ(o.kind, Kind::kFailed);
  EXPECT_EQ(o.detail.rfind("timeout:", 0), 0u) << o.detail;
  EXPECT_NE(o.detail.find(files_.output.string()), std::string::npos) << "names the output file";
  write(files_.output,
        "slurmstepd: error: *** JOB 7 ON node1 CANCELLED AT 2024-05-01T10:00:00 ***\n");
  EXPECT_EQ(job_outcome(std::nullopt, files_).detail.rfind("cancelled:", 0), 0u);
}

TEST_F(JobFilesTest, NonZeroExitIsNamed) {
  results(1);
  exit_status(3);
  auto o = job_outcome(slurm("FAILED"), files_);
  EXPECT_EQ(o.kind, Kind::kFailed);
  EXPECT_EQ(o.detail.rfind("non-zero exit: runtime failure", 0), 0u) << o.detail;
  // Exit status 1 means wrong results only when the results hold mismatches.
  exit_status(1);
  EXPECT_EQ(job_outcome(slurm("FAILED"), files_)
                .detail.rfind("non-zero exit: exit status 1 and no wrong", 0),
            0u);
  results(2, 5);
  EXPECT_EQ(
      job_outcome(slurm("FAILED"), files_).detail.rfind("wrong results: 10 mismatched elements", 0),
      0u)
      << job_outcome(slurm("FAILED"), files_).detail;
  exit_status(137);
  EXPECT_NE(job_outcome(slurm("FAILED"), files_).detail.find("signal 9"), std::string::npos);
  fs::remove(dir_ / "job-7" / "exit_status");
  auto failed = slurm("FAILED");
  failed.exit_code = 2;
  EXPECT_EQ(job_outcome(failed, files_).detail,
            "non-zero exit: Slurm says FAILED with exit code 2");
}

// The kind of a failure is data beside its reason, whose first words name the same kind.
TEST_F(JobFilesTest, FailureKindsAreData) {
  auto kind_of = [&](const std::optional<JobState>& state) {
    const auto o = job_outcome(state, files_);
    EXPECT_EQ(o.kind, Kind::kFailed);
    if (o.failure) {
      EXPECT_EQ(o.detail.rfind(std::string(failure_words(*o.failure)) + ": ", 0), 0u) << o.detail;
    }
    return o.failure;
  };
  EXPECT_EQ(kind_of(std::nullopt), FailureKind::kNoOutput);
  results(2, 5);
  exit_status(1);
  EXPECT_EQ(kind_of(slurm("FAILED")), FailureKind::kWrongResults);
  exit_status(2);
  EXPECT_EQ(kind_of(slurm("FAILED")), FailureKind::kNonZeroExit);
  EXPECT_EQ(kind_of(slurm("TIMEOUT")), FailureKind::kTimeout);
  EXPECT_EQ(kind_of(slurm("CANCELLED")), FailureKind::kCancelled);
  EXPECT_EQ(kind_of(slurm("NODE_FAIL")), FailureKind::kNodeFailure);
  EXPECT_EQ(kind_of(slurm("PREEMPTED")), FailureKind::kPreempted);
  EXPECT_EQ(kind_of(slurm("OUT_OF_MEMORY")), FailureKind::kOutOfMemory);
  EXPECT_EQ(kind_of(slurm("BOOT_FAIL")), FailureKind::kBootFailure);
  EXPECT_EQ(job_outcome(slurm("RUNNING"), files_).failure, std::nullopt);
  EXPECT_EQ(describe_failed_exit(1, ResultsSummary{1, 1, 3, 0}).kind, FailureKind::kWrongResults);
  EXPECT_EQ(describe_failed_exit(1, ResultsSummary{1, 1, 0, 0}).kind, FailureKind::kNonZeroExit);
  EXPECT_EQ(describe_failed_exit(137, std::nullopt).reason,
            "non-zero exit: a task was killed by signal 9 (exit status 137)");
}

TEST(Failure, ExitCodeComesFromTheKind) {
  EXPECT_EQ(exit_code_of(FailureKind::kWrongResults), ExitCode::kCheckFailed);
  for (auto kind : {FailureKind::kTimeout, FailureKind::kCancelled, FailureKind::kNodeFailure,
                    FailureKind::kPreempted, FailureKind::kOutOfMemory, FailureKind::kBootFailure,
                    FailureKind::kNonZeroExit, FailureKind::kNoOutput}) {
    EXPECT_EQ(exit_code_of(kind), ExitCode::kRuntime) << enum_name(kind);
  }
  EXPECT_EQ(enum_name(FailureKind::kWrongResults), "wrong_results");
  EXPECT_EQ(enum_from_name<FailureKind>("node_failure"), FailureKind::kNodeFailure);
  EXPECT_EQ(failure(FailureKind::kNoOutput, "nothing").reason, "no output: nothing");
}

TEST_F(JobFilesTest, NoOutputCases) {
  // Nothing at all.
  auto o = job_outcome(std::nullopt, files_);
  EXPECT_EQ(o.kind, Kind::kFailed);
  EXPECT_EQ(o.detail.rfind("no output:", 0), 0u) << o.detail;
  // Exit 0 but no result rows.
  exit_status(0);
  write(files_.raw_jsonl, context_line());
  o = job_outcome(slurm("COMPLETED"), files_);
  EXPECT_EQ(o.detail.rfind("no output: collbench exited 0 but wrote no results", 0), 0u)
      << o.detail;
  // The batch script died before collbench finished (no exit status).
  fs::remove(dir_ / "job-7" / "exit_status");
  write(files_.output, "# header\n");
  o = job_outcome(slurm("COMPLETED"), files_);
  EXPECT_EQ(o.detail.rfind("no output: the job ended before collbench finished", 0), 0u)
      << o.detail;
}

TEST_F(JobFilesTest, LabelsGoOnEveryRecordAndCutLinesAreDropped) {
  {
    std::ofstream out(files_.raw_jsonl);
    out << context_line(R"({"keep":"x","run":"old"})") << result_line(0, 1.5) << result_line(2)
        << result_line(std::nullopt)
        << R"({"record":"result","wrong":"none"})"  // not a result row collbench writes
        << "\n"
        << R"({"record":"result","wr)";  // cut by a crash
  }
  const nlohmann::json labels{{"campaign", "c"}, {"run", "r1"}, {"repeat", 0}};
  const auto dest = dir_ / "r1.jsonl";
  const auto s = write_labelled(files_.raw_jsonl, dest, labels);
  EXPECT_EQ(s.contexts, 1u);
  EXPECT_EQ(s.results, 3u);
  EXPECT_EQ(s.wrong, 2u);
  EXPECT_EQ(s.bad_lines, 2u) << "the cut line, and the line the result model cannot read";
  std::ifstream in(dest);
  int lines = 0;
  for (std::string line; std::getline(in, line); ++lines) {
    const auto j = nlohmann::json::parse(line);
    EXPECT_EQ(j["labels"]["campaign"], "c");
    EXPECT_EQ(j["labels"]["run"], "r1");
    EXPECT_EQ(j["labels"]["repeat"], 0);
    if (lines == 0) {
      EXPECT_EQ(j["labels"]["keep"], "x") << "labels already there are kept";
    }
    if (lines == 1) {
      EXPECT_EQ(j["busbw_gbps"], 1.5) << "records are otherwise unchanged";
    }
  }
  EXPECT_EQ(lines, 4);
  for (const auto& entry : fs::directory_iterator(dir_)) {
    EXPECT_EQ(entry.path().extension() == ".tmp", false)
        << "no temporary file left: " << entry.path();
  }
  const auto summary = summarize_results(dest);
  ASSERT_TRUE(summary);
  EXPECT_EQ(summary->results, 3u);
  EXPECT_FALSE(summarize_results(dir_ / "missing.jsonl"));
}

TEST(Slurm, PartitionLimitsFromScontrol) {
  const std::string out =
      "PartitionName=all AllowGroups=ALL Default=YES MaxNodes=UNLIMITED Nodes=node[1-4] "
      "TotalCPUs=8 TotalNodes=4\n"
      "PartitionName=pair AllowGroups=ALL Default=NO MaxNodes=1 Nodes=node[1-2] TotalCPUs=4 "
      "TotalNodes=2\n";
  const auto all = parse_partition_limits(out, "all");
  ASSERT_TRUE(all);
  EXPECT_EQ(all->total_nodes, 4);
  EXPECT_FALSE(all->max_nodes);
  const auto pair = parse_partition_limits(out, "pair");
  ASSERT_TRUE(pair);
  EXPECT_EQ(pair->total_nodes, 2);
  EXPECT_EQ(pair->max_nodes, 1);
  // The hosts, which placement: across draws from.
  EXPECT_EQ(all->hosts, (std::vector<std::string>{"node1", "node2", "node3", "node4"}));
  EXPECT_EQ(pair->hosts, (std::vector<std::string>{"node1", "node2"}));
  const auto empty = parse_partition_limits(
      "PartitionName=none Default=NO MaxNodes=UNLIMITED Nodes=(null) TotalNodes=0\n", "none");
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->hosts.empty());
  const auto def = parse_partition_limits(out, "");
  ASSERT_TRUE(def);
  EXPECT_EQ(def->name, "all");
  EXPECT_FALSE(parse_partition_limits(out, "gpu"));
  EXPECT_FALSE(parse_partition_limits("", "all"));
}

TEST(Slurm, PhasesOfStates) {
  EXPECT_EQ(phase_of("PENDING"), JobPhase::kWaiting);
  EXPECT_EQ(phase_of("CONFIGURING"), JobPhase::kWaiting);
  EXPECT_EQ(phase_of("RUNNING"), JobPhase::kRunning);
  EXPECT_EQ(phase_of("COMPLETING"), JobPhase::kRunning);
  EXPECT_EQ(phase_of("COMPLETED"), JobPhase::kEnded);
  EXPECT_EQ(phase_of("TIMEOUT"), JobPhase::kEnded);
  EXPECT_EQ(failure_from_output("nothing here"), std::nullopt);
  EXPECT_EQ(failure_from_output("*** JOB 3 ON n1 CANCELLED AT x DUE TO NODE FAILURE ***"),
            FailureKind::kNodeFailure);
}

}  // namespace
}  // namespace collbench::sweep
