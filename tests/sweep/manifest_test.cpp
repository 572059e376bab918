// The manifest: events fold into run states, damaged files are handled, and the lock excludes
// a second process for real.
#include "collbench/sweep/manifest.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "collbench/error.h"

namespace collbench::sweep {
namespace {

namespace fs = std::filesystem;
using State = RunRecord::State;

fs::path temp_dir(const std::string& name) {
  auto dir =
      fs::temp_directory_path() / ("collbench-manifest-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  return dir;
}

TEST(Manifest, EventsFoldIntoRunStates) {
  const auto dir = temp_dir("fold");
  Manifest m(dir / "manifest.jsonl");
  {
    const auto lock = m.lock(5);
    m.append({{"event", "submitted"}, {"run", "a"}, {"job_id", "10"}});
    m.append({{"event", "submitted"}, {"run", "b"}, {"job_id", "11"}});
    m.append({{"event", "failed"}, {"run", "b"}, {"job_id", "11"}, {"reason", "cancelled: x"}});
    m.append({{"event", "collected"}, {"run", "a"}, {"job_id", "10"}});
    m.append({{"event", "submitted"}, {"run", "b"}, {"job_id", "12"}});
    m.append({{"event", "started"}, {"run", "c"}});
    m.append({{"event", "failed"}, {"run", "c"}, {"reason", "wrong results"}});
  }
  const auto runs = m.runs();
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs.at("a").state, State::kCollected);
  EXPECT_EQ(runs.at("a").job_id, "10");
  EXPECT_EQ(runs.at("b").state, State::kSubmitted);
  EXPECT_EQ(runs.at("b").job_id, "12");
  EXPECT_EQ(runs.at("b").attempts, 2);
  EXPECT_EQ(runs.at("b").reason, "");
  EXPECT_EQ(runs.at("c").state, State::kFailed);
  EXPECT_EQ(runs.at("c").reason, "wrong results");
  // Every event carries the schema tag and a time.
  for (const auto& e : m.events()) {
    EXPECT_EQ(e["schema"]["name"], "collbench-sweep-manifest");
    EXPECT_TRUE(e.contains("time"));
  }
  fs::remove_all(dir);
}

TEST(Manifest, CutLastLineIsSkippedDamagedMiddleLineIsAnError) {
  const auto dir = temp_dir("damage");
  fs::create_directories(dir);
  Manifest m(dir / "manifest.jsonl");
  m.append({{"event", "submitted"}, {"run", "a"}, {"job_id", "1"}});
  {
    std::ofstream(m.path(), std::ios::app)
        << R"({"event":"collected","run":"a")";  // a crash mid-write
  }
  EXPECT_EQ(m.runs().at("a").state, State::kSubmitted);
  {
    std::ofstream(m.path(), std::ios::app) << "\n"
                                           << R"({"event":"collected","run":"a"})"
                                           << "\n";
  }
  try {
    m.events();
    FAIL() << "a damaged line in the middle must not be ignored";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("manifest.jsonl:2:"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

TEST(Manifest, NoFileMeansNoRuns) {
  Manifest m(temp_dir("none") / "manifest.jsonl");
  EXPECT_TRUE(m.runs().empty());
}

// Two processes: while a child holds the lock, the parent cannot take it; once the child lets
// go, it can.
TEST(Manifest, LockExcludesAnotherProcess) {
  const auto dir = temp_dir("lock");
  Manifest m(dir / "manifest.jsonl");
  m.lock(1);  // creates the file
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto lock = m.lock(5);
    char c = 'x';
    if (::write(ready[1], &c, 1) != 1) ::_exit(1);
    std::this_thread::sleep_for(std::chrono::milliseconds(800));
    ::_exit(0);
  }
  char c;
  ASSERT_EQ(::read(ready[0], &c, 1), 1);
  bool waited = false;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    m.lock(0.2, [&] { waited = true; });
    FAIL() << "took a lock another process holds";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kRuntime);
    EXPECT_NE(std::string(e.what()).find("locked by another collbench-sweep"), std::string::npos);
  }
  EXPECT_TRUE(waited);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(200));
  // Waiting long enough gets it once the child exits.
  EXPECT_NO_THROW(m.lock(10));
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ::close(ready[0]);
  ::close(ready[1]);
  fs::remove_all(dir);
}

// Appends from several processes at once land whole, one event per line.
TEST(Manifest, ConcurrentAppendsStayWholeLines) {
  const auto dir = temp_dir("append");
  fs::create_directories(dir);
  Manifest m(dir / "manifest.jsonl");
  constexpr int kProcesses = 4, kEvents = 50;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      for (int i = 0; i < kEvents; ++i) {
        m.append({{"event", "submitted"},
                  {"run", "r" + std::to_string(p)},
                  {"job_id", std::to_string(i)},
                  {"padding", std::string(500, 'x')}});
      }
      ::_exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) ::waitpid(pid, nullptr, 0);
  const auto events = m.events();
  EXPECT_EQ(events.size(), static_cast<std::size_t>(kProcesses * kEvents));
  const auto runs = m.runs();
  for (int p = 0; p < kProcesses; ++p)
    EXPECT_EQ(runs.at("r" + std::to_string(p)).attempts, kEvents);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace collbench::sweep
