// The manifest: events fold into run states, damaged files are handled, and the lock excludes
// a second process for real.
#include "collbench/sweep/manifest.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
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

ManifestEvent event(EventKind kind, const std::string& run, const std::string& job_id = "") {
  ManifestEvent e(kind, run);
  e.job_id = job_id;
  return e;
}

ManifestEvent failed_event(const std::string& run, const std::string& job_id,
                           const std::string& reason, FailureKind kind) {
  ManifestEvent e = event(EventKind::kFailed, run, job_id);
  e.reason = reason;
  e.failure = kind;
  return e;
}

// The manifest's lines as JSON, as other programs read them.
std::vector<nlohmann::json> lines_of(const Manifest& m) {
  std::vector<nlohmann::json> out;
  std::ifstream in(m.path());
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

void write_lines(const fs::path& file, const std::vector<std::string>& lines) {
  fs::create_directories(file.parent_path());
  std::ofstream out(file);
  for (const auto& line : lines) out << line << "\n";
}

TEST(Manifest, EventsFoldIntoRunStates) {
  const auto dir = temp_dir("fold");
  Manifest m(dir / "manifest.jsonl");
  {
    const auto lock = m.lock(5);
    m.append(event(EventKind::kSubmitted, "a", "10"));
    m.append(event(EventKind::kSubmitted, "b", "11"));
    m.append(failed_event("b", "11", "cancelled: x", FailureKind::kCancelled));
    m.append(event(EventKind::kCollected, "a", "10"));
    m.append(event(EventKind::kSubmitted, "b", "12"));
    m.append(event(EventKind::kStarted, "c"));
    m.append(failed_event("c", "", "wrong results", FailureKind::kWrongResults));
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
  EXPECT_EQ(runs.at("c").failure, FailureKind::kWrongResults);
  // Every event carries the schema tag and a time.
  for (const auto& e : lines_of(m)) {
    EXPECT_EQ(e["schema"]["name"], "collbench-sweep-manifest");
    EXPECT_TRUE(e.contains("time"));
  }
  fs::remove_all(dir);
}

TEST(Manifest, CutEventsAreSkippedWhereverTheyStandDamagedLinesAreAnError) {
  const auto dir = temp_dir("damage");
  fs::create_directories(dir);
  Manifest m(dir / "manifest.jsonl");
  m.append(event(EventKind::kSubmitted, "a", "1"));
  {
    std::ofstream(m.path(), std::ios::app)
        << R"({"event":"collected","run":"a")";  // a crash mid-write
  }
  EXPECT_EQ(m.runs().at("a").state, State::kSubmitted);
  // The next event starts on a fresh line: the cut one stays one skipped line, in the middle.
  m.append(event(EventKind::kFailed, "a", "1"));
  std::ifstream in(m.path());
  int lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  EXPECT_EQ(lines, 3);
  EXPECT_EQ(m.runs().at("a").state, State::kFailed);
  // Damage that is no cut event is an error, with its line, as bad input (exit 2).
  { std::ofstream(m.path(), std::ios::app) << "garbage\n"; }
  try {
    m.events();
    FAIL() << "a damaged line must not be ignored";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage);
    EXPECT_NE(std::string(e.what()).find("manifest.jsonl:4:"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

TEST(Manifest, EventsFoldInTheOrderTheyHappenedNotTheFilesOrder) {
  const auto dir = temp_dir("order");
  fs::create_directories(dir);
  Manifest m(dir / "manifest.jsonl");
  ManifestEvent started(EventKind::kStarted, "a");
  started.time = "2026-12-01T10:00:00.000Z";
  ManifestEvent collected(EventKind::kCollected, "a");
  collected.time = "2026-12-01T10:00:05.250Z";
  m.append(collected);  // as a reversed (tac) manifest has them
  m.append(started);
  EXPECT_EQ(m.runs().at("a").state, State::kCollected);
  fs::remove_all(dir);
}

TEST(Manifest, ANewerSchemaVersionIsRefusedByName) {
  const auto dir = temp_dir("newer");
  fs::create_directories(dir);
  Manifest m(dir / "manifest.jsonl");
  write_lines(m.path(), {R"({"event":"submitted","run":"a","job_id":"1","schema":{"name":)"
                         R"("collbench-sweep-manifest","version":7}})"});
  try {
    m.events();
    FAIL() << "a newer manifest was read";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage);
    EXPECT_NE(std::string(e.what()).find("manifest.jsonl:1: manifest schema version 7, newer"),
              std::string::npos)
        << e.what();
  }
  fs::remove_all(dir);
}

TEST(Manifest, MemberOfTheWrongTypeNamesLineAndMember) {
  const auto dir = temp_dir("badtype");
  Manifest m(dir / "manifest.jsonl");
  write_lines(m.path(), {R"({"event":"submitted","run":"a","job_id":"1"})",
                         R"({"event":"collected","run":"a","results":"many"})"});
  try {
    m.events();
    FAIL() << "a member of the wrong type must not be ignored";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage);
    EXPECT_NE(std::string(e.what()).find("manifest.jsonl:2: results: expected an integer"),
              std::string::npos)
        << e.what();
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
      const std::string run = "r" + std::to_string(p);
      for (int i = 0; i < kEvents; ++i) {
        auto e = event(EventKind::kSubmitted, run, std::to_string(i));
        e.output = std::string(500, 'x');  // padding: long lines must land whole too
        m.append(e);
      }
      ::_exit(0);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) ::waitpid(pid, nullptr, 0);
  const auto events = m.events();
  EXPECT_EQ(events.size(), static_cast<std::size_t>(kProcesses * kEvents));
  const auto runs = m.runs();
  for (int p = 0; p < kProcesses; ++p) EXPECT_EQ(runs.at(fmt::format("r{}", p)).attempts, kEvents);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace collbench::sweep
