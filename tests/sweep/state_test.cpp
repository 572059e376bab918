// The sweep's state under signals and edits: supervised launches that go down with the sweep even
// when it is killed with SIGKILL, launch identities that tell a live run from a dead one, and run
// definitions recorded in the manifest so that a campaign edited after it ran is noticed.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "collbench/sweep/collect.h"
#include "collbench/sweep/doctor_gate.h"
#include "collbench/sweep/launch.h"
#include "collbench/sweep/manifest.h"
#include "collbench/sweep/process.h"

namespace collbench::sweep {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// Waits up to `limit` for `done()`.
template <typename Done>
bool eventually(Done done, std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
    std::this_thread::sleep_for(50ms);
  }
  return done();
}

class StateFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/collbench-state-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

// A launcher like mpirun: its "ranks" are in process groups of their own (`set -m`), and they
// ignore SIGTERM the way a rank stuck in a collective does not answer it.
const std::vector<std::string> kLauncher = {
    "sh", "-c", "set -m; sh -c 'trap \"\" TERM; sleep 300' & sh -c 'sleep 300' & wait"};

TEST(Supervised, ReportsExitStatusSignalAndTimeout) {
  ProcessSpec exit3{{"sh", "-c", "exit 3"}};
  exit3.supervised = true;
  std::optional<LaunchId> seen;
  exit3.on_start = [&](const LaunchId& id) { seen = id; };
  const auto r = run_process(exit3);
  EXPECT_EQ(r.exit_code, 3);
  ASSERT_TRUE(seen);
  EXPECT_GT(seen->pid, 0);
  EXPECT_GT(seen->start_ticks, 0u);
  EXPECT_FALSE(seen->boot_id.empty());

  ProcessSpec killed{{"sh", "-c", "kill -9 $$"}};
  killed.supervised = true;
  EXPECT_EQ(run_process(killed).signal, 9);

  // The time limit ends the whole session, ranks that ignore SIGTERM included.
  ProcessSpec slow{kLauncher};
  slow.supervised = true;
  slow.timeout_s = 0.5;
  slow.grace_s = 0.5;
  LaunchId launch;
  slow.on_start = [&](const LaunchId& id) { launch = id; };
  const auto t0 = std::chrono::steady_clock::now();
  const auto s = run_process(slow);
  EXPECT_TRUE(s.timed_out);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
  EXPECT_TRUE(eventually([&] { return launch_processes(launch).empty(); }, 5000ms));

  EXPECT_THROW(run_process(ProcessSpec{{"/nonexistent/program"}}), Error);
}

TEST_F(StateFiles, SupervisedLaunchGoesDownWhenTheSweepIsKilled) {
  for (const int sig : {SIGKILL, SIGTERM}) {
    // A stand-in sweep: a child of this test that runs the launcher and is then killed.
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const pid_t sweep = ::fork();
    ASSERT_GE(sweep, 0);
    if (sweep == 0) {
      ::close(fds[0]);
      ProcessSpec spec{kLauncher, std::nullopt, dir_ / "log", 0, 1};
      spec.supervised = true;
      spec.on_start = [&](const LaunchId& id) {
        const int values[2] = {id.pid, static_cast<int>(id.start_ticks)};
        if (::write(fds[1], values, sizeof values) != sizeof values) ::_exit(2);
      };
      run_process(spec);
      ::_exit(0);
    }
    ::close(fds[1]);
    int values[2] = {0, 0};
    ASSERT_EQ(::read(fds[0], values, sizeof values), static_cast<ssize_t>(sizeof values));
    ::close(fds[0]);
    const auto launch = identify_process(values[0]);
    ASSERT_TRUE(launch);
    // The launcher and both ranks run.
    EXPECT_TRUE(eventually([&] { return launch_processes(*launch).size() >= 3; }, 5000ms));
    ::kill(sweep, sig);
    int status = 0;
    ::waitpid(sweep, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status));
    // SIGTERM first, SIGKILL after the grace period for the rank that ignores it.
    EXPECT_TRUE(eventually([&] { return launch_processes(*launch).empty(); }, 8000ms))
        << "signal " << sig << " left " << launch_processes(*launch).size() << " processes";
  }
}

TEST(LaunchIdentity, TellsALiveLaunchFromAGoneOne) {
  const auto self = identify_process(::getpid());
  ASSERT_TRUE(self);
  EXPECT_EQ(self->pid, ::getpid());
  EXPECT_FALSE(identify_process(0));
  // Another boot, or a pid whose start is later than recorded, is not that launch.
  LaunchId other_boot = *self;
  other_boot.boot_id = "00000000-0000-0000-0000-000000000000";
  EXPECT_TRUE(launch_processes(other_boot).empty());
  const pid_t child = ::fork();
  if (child == 0) {
    ::setsid();
    ::pause();
    ::_exit(0);
  }
  ASSERT_TRUE(eventually([&] { return ::getsid(child) == child; }, 2000ms));
  const auto launch = identify_process(child);
  ASSERT_TRUE(launch);
  EXPECT_EQ(launch_processes(*launch), std::vector<int>{child});
  LaunchId earlier = *launch;
  earlier.start_ticks += 1000000;  // a launch recorded as starting after this process did
  EXPECT_TRUE(launch_processes(earlier).empty());
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  EXPECT_TRUE(launch_processes(*launch).empty());
}

TEST_F(StateFiles, ManifestKeepsEachRunsDefinitionAndLaunch) {
  const Manifest m(dir_ / "manifest.jsonl");
  RunDefinition d;
  d.collbench_args = {"all_reduce", "-b", "8", "-e", "1024", "-n", "3"};
  d.env = {{"NCCL_ALGO", "ring"}, {"UNSET_ME", std::nullopt}};
  d.nodes = 1;
  d.tasks_per_node = 2;
  ManifestEvent started(EventKind::kStarted, "local-n1x2-a-r0");
  started.mode = Where::kLocal;
  started.raw_jsonl = "/r/raw";
  started.definition = d;
  started.launch = LaunchId{1234, 99, "boot"};
  m.append(started);
  ManifestEvent submitted(EventKind::kSubmitted, "default-n1x2-a-r0");
  RunDefinition slurm = d;
  slurm.partition = "gpu";
  slurm.launcher = "srun";
  submitted.definition = slurm;
  submitted.job_id = "7";
  m.append(submitted);
  m.append(ManifestEvent(EventKind::kCollected, "local-n1x2-a-r0"));

  const auto runs = m.runs();
  const auto& local = runs.at("local-n1x2-a-r0");
  EXPECT_EQ(local.state, RunRecord::State::kCollected);
  EXPECT_EQ(local.where, Where::kLocal);
  ASSERT_TRUE(local.definition);
  EXPECT_EQ(*local.definition, d);
  ASSERT_TRUE(local.launch);
  EXPECT_EQ(*local.launch, (LaunchId{1234, 99, "boot"}));
  EXPECT_EQ(local.raw_jsonl, "/r/raw");
  const auto& job = runs.at("default-n1x2-a-r0");
  EXPECT_EQ(job.where, Where::kSlurm);
  EXPECT_EQ(*job.definition, slurm);
  EXPECT_FALSE(job.launch);
}

TEST(RunDefinition, ChangesAreNamed) {
  RunDefinition was;
  was.collbench_args = {"all_reduce", "-e", "1M", "-n", "20"};
  was.env = {{"NCCL_ALGO", "ring"}};
  was.nodes = 1;
  was.tasks_per_node = 2;
  EXPECT_EQ(describe_change(was, was), "");
  RunDefinition now = was;
  now.collbench_args = {"all_reduce", "-e", "4M", "-n", "20"};
  now.env = {{"NCCL_ALGO", "tree"}};
  now.nodes = 2;
  EXPECT_EQ(describe_change(was, now),
            "collbench arguments `all_reduce -e 1M -n 20` -> `all_reduce -e 4M -n 20`; "
            "environment `NCCL_ALGO=ring` -> `NCCL_ALGO=tree`; nodes 1 -> 2");
}

TEST_F(StateFiles, AJobTheDoctorStoppedIsARuntimeFailureInItsWords) {
  // What slurm/collbench.sbatch leaves with COLLBENCH_DOCTOR=require when the doctor failed.
  const JobFiles files{dir_ / "slurm-43.out", dir_ / "job-43" / "collbench.jsonl.raw"};
  fs::create_directories(files.raw_jsonl.parent_path());
  std::ofstream(files.output) << "#   HOST   CHECK  STATUS\n"
                                 "# collbench.sbatch: the doctor found a problem on the nodes "
                                 "(exit status 1; see /r/job-43/doctor.json); the benchmark was "
                                 "not run (COLLBENCH_DOCTOR=require); exit status 3\n";
  std::ofstream(files.raw_jsonl.parent_path() / "exit_status") << "3\n";
  const Outcome o = job_outcome(std::nullopt, files);
  EXPECT_EQ(o.kind, Outcome::Kind::kFailed);
  ASSERT_TRUE(o.failure);
  EXPECT_EQ(exit_code_of(*o.failure), ExitCode::kRuntime);
  EXPECT_EQ(o.detail,
            "non-zero exit: the doctor found a problem on the nodes (exit status 1; see "
            "/r/job-43/doctor.json); the benchmark was not run (COLLBENCH_DOCTOR=require) (see " +
                files.output.string() + ")");
  // A warning under COLLBENCH_DOCTOR=check is no verdict: the job's own status decides.
  std::ofstream(files.output) << "# warning: the doctor could not run (exit status 3; see its "
                                 "output above); measuring anyway (COLLBENCH_DOCTOR=check)\n";
  EXPECT_TRUE(job_outcome(std::nullopt, files).detail.starts_with("non-zero exit: runtime failure"))
      << job_outcome(std::nullopt, files).detail;
}

TEST(DoctorGate, CheckMeasuresAnywayRequireAndStrictOnlyAfterAPass) {
  const fs::path report = "/r/doctor.json";
  for (const auto mode : {DoctorMode::kCheck, DoctorMode::kRequire, DoctorMode::kStrict}) {
    const bool check = mode == DoctorMode::kCheck;
    EXPECT_TRUE(doctor_verdict(mode, 0, "exit status 0", report).measure);
    const auto found = doctor_verdict(mode, 1, "exit status 1", report);
    EXPECT_EQ(found.measure, check);
    EXPECT_EQ(found.words,
              "the doctor found a problem on the host (exit status 1; see /r/doctor.json)");
    for (const int code : {2, 3, -1}) {
      const auto broken = doctor_verdict(mode, code, "timed out", report);
      EXPECT_EQ(broken.measure, check) << code;
      EXPECT_EQ(broken.words, "the doctor could not run (timed out)");
    }
  }
}

TEST(RunDefinition, AnOlderManifestWithoutADoctorMatchesACampaignWithout) {
  RunDefinition d;
  d.collbench_args = {"all_reduce"};
  d.nodes = 1;
  d.tasks_per_node = 1;
  const auto j = json_value(d);
  EXPECT_FALSE(j.contains("doctor")) << j.dump();
  d.doctor = "require";
  EXPECT_EQ(json_value(d).at("doctor"), "require");
}

TEST_F(StateFiles, ALauncherStoppedByASignalIsARuntimeFailureInItsWords) {
  // What slurm/collbench.sbatch leaves when a signal stopped mpirun (whose own status was 1).
  const JobFiles files{dir_ / "slurm-42.out", dir_ / "job-42" / "collbench.jsonl.raw"};
  fs::create_directories(files.raw_jsonl.parent_path());
  std::ofstream(files.output)
      << "# collbench.sbatch: the launcher was stopped by SIGTERM (its "
         "exit status 1); exit status 3\n# collbench exited with status 3\n";
  std::ofstream(files.raw_jsonl.parent_path() / "exit_status") << "3\n";
  const Outcome o = job_outcome(std::nullopt, files);
  EXPECT_EQ(o.kind, Outcome::Kind::kFailed);
  ASSERT_TRUE(o.failure);
  EXPECT_EQ(exit_code_of(*o.failure), ExitCode::kRuntime);
  EXPECT_TRUE(o.detail.starts_with(
      "non-zero exit: the launcher was stopped by SIGTERM (its exit status 1) (see "))
      << o.detail;
}

}  // namespace
}  // namespace collbench::sweep
