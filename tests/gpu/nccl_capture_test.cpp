// The NCCL debug-log capture: the environment it sets for NCCL and restores, and the lines it
// forwards to the user. The tests play NCCL's part by writing to NCCL_DEBUG_FILE as NCCL does.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "nccl_debug_capture.h"

namespace collbench::nccl {
namespace {

TEST(CaptureEnvironment, UserLoggingOff) {
  const CaptureEnvironment c = capture_environment({}, "/tmp/cap");
  EXPECT_EQ(c.level, "INFO");
  EXPECT_EQ(c.subsys, "INIT,NET,ENV");
  EXPECT_EQ(c.file, "/tmp/cap");
  EXPECT_FALSE(c.superset);
  EXPECT_EQ(
      capture_environment({std::string("WARN"), std::string("COLL"), std::nullopt}, "/t").subsys,
      "INIT,NET,ENV");
  EXPECT_EQ(capture_environment({std::string("version"), std::nullopt, std::nullopt}, "/t").level,
            "INFO");
}

TEST(CaptureEnvironment, TheUsersOwnTuningLinesAreRecordedForFree) {
  const auto s = [](const char* level, const char* subsys) {
    return DebugSettings{level ? std::optional<std::string>(level) : std::nullopt,
                         subsys ? std::optional<std::string>(subsys) : std::nullopt, std::nullopt};
  };
  EXPECT_TRUE(logs_tuning(s("INFO", "INIT,TUNING")));
  EXPECT_TRUE(logs_tuning(s("info", "tuning")));
  EXPECT_TRUE(logs_tuning(s("TRACE", "ALL")));
  EXPECT_TRUE(logs_tuning(s("INFO", "^COLL,P2P")));  // everything but COLL and P2P
  EXPECT_FALSE(logs_tuning(s("INFO", "^TUNING")));
  EXPECT_FALSE(logs_tuning(s("INFO", "INIT,NET")));
  EXPECT_FALSE(logs_tuning(s("INFO", nullptr)));  // NCCL's default set has no TUNING
  EXPECT_FALSE(logs_tuning(s("WARN", "TUNING")));
  EXPECT_FALSE(logs_tuning(s(nullptr, "TUNING")));
}

TEST(CaptureEnvironment, UserInfoKeepsTheirSettings) {
  // NCCL's default subsystems include INIT: nothing to add, the user sees exactly their output.
  CaptureEnvironment c =
      capture_environment({std::string("INFO"), std::nullopt, std::nullopt}, "/t");
  EXPECT_EQ(c.level, "INFO");
  EXPECT_FALSE(c.subsys.has_value());
  EXPECT_FALSE(c.superset);
  c = capture_environment({std::string("TRACE"), std::string("INIT,COLL"), std::nullopt}, "/t");
  EXPECT_EQ(c.level, "TRACE");
  EXPECT_FALSE(c.subsys.has_value());
  c = capture_environment({std::string("info"), std::string("all"), std::nullopt}, "/t");
  EXPECT_FALSE(c.subsys.has_value());
}

TEST(CaptureEnvironment, UserSubsystemsWithoutInitGetIt) {
  CaptureEnvironment c =
      capture_environment({std::string("INFO"), std::string("COLL,P2P"), std::nullopt}, "/t");
  EXPECT_EQ(c.subsys, "COLL,P2P,INIT,ENV");  // the output changes anyway: ENV for the settings
  EXPECT_TRUE(c.superset);
  c = capture_environment({std::string("INFO"), std::string("COLL,ENV"), std::nullopt}, "/t");
  EXPECT_EQ(c.subsys, "COLL,ENV,INIT");
  c = capture_environment({std::string("INFO"), std::string("^INIT,COLL"), std::nullopt}, "/t");
  EXPECT_EQ(c.subsys, "^COLL");
  EXPECT_TRUE(c.superset);
  c = capture_environment({std::string("INFO"), std::string("^INIT"), std::nullopt}, "/t");
  EXPECT_EQ(c.subsys, "ALL");
  c = capture_environment({std::string("INFO"), std::string("^COLL"), std::nullopt}, "/t");
  EXPECT_FALSE(c.subsys.has_value());  // INIT is not excluded: keep the user's value
  EXPECT_FALSE(c.superset);
}

TEST(CaptureEnvironment, TuningOnRequest) {
  // Per-call TUNING lines cost time, so only when asked; the user then sees them too.
  EXPECT_EQ(capture_environment({}, "/t", true).subsys, "INIT,NET,ENV,TUNING");
  CaptureEnvironment c =
      capture_environment({std::string("INFO"), std::nullopt, std::nullopt}, "/t", true);
  EXPECT_EQ(c.subsys, "INIT,BOOTSTRAP,ENV,TUNING");
  EXPECT_TRUE(c.superset);
  c = capture_environment({std::string("INFO"), std::string("INIT,TUNING"), std::nullopt}, "/t",
                          true);
  EXPECT_FALSE(c.subsys.has_value());
  EXPECT_FALSE(c.superset);
  c = capture_environment({std::string("INFO"), std::string("INIT"), std::nullopt}, "/t", true);
  EXPECT_EQ(c.subsys, "INIT,TUNING,ENV");
  c = capture_environment({std::string("INFO"), std::string("^TUNING,COLL"), std::nullopt}, "/t",
                          true);
  EXPECT_EQ(c.subsys, "^COLL");
  EXPECT_TRUE(c.superset);
}

TEST(CaptureEnvironment, PercentInThePathIsEscaped) {
  EXPECT_EQ(capture_environment({}, "/tmp/a%b").file, "/tmp/a%%b");
}

TEST(CaptureEnvironment, Levels) {
  EXPECT_EQ(parse_level(std::nullopt), LogLevel::kNone);
  EXPECT_EQ(parse_level(std::string("warn")), LogLevel::kWarn);
  EXPECT_EQ(parse_level(std::string("Info")), LogLevel::kInfo);
  EXPECT_EQ(parse_level(std::string("ABORT")), LogLevel::kAbort);
  EXPECT_EQ(parse_level(std::string("TRACE")), LogLevel::kTrace);
  EXPECT_EQ(parse_level(std::string("loud")), LogLevel::kNone);
}

constexpr const char* kBanner = "h:1:1 [0] NCCL INFO NCCL version 2.28.3+cuda13.0";
constexpr const char* kInfo = "h:1:2 [0] NCCL INFO Using network Socket";
constexpr const char* kWarn =
    "h:1:2 [0] misc/socket.cc:50 NCCL WARN socketProgress: Connection closed by remote peer";
constexpr const char* kTrace = "h:1:2 [0] 0.123 ncclProxyProgress:12 NCCL TRACE progress";

TEST(LineFilter, NothingWhenUserLoggingIsOff) {
  LineFilter f(LogLevel::kNone);
  for (const char* line : {kBanner, kInfo, kWarn, kTrace}) EXPECT_FALSE(f.forward(line)) << line;
}

TEST(LineFilter, VersionShowsTheBareBanner) {
  LineFilter f(LogLevel::kVersion);
  EXPECT_EQ(f.forward(kBanner), "NCCL version 2.28.3+cuda13.0");
  EXPECT_FALSE(f.forward(kInfo));
  EXPECT_FALSE(f.forward(kWarn));
}

TEST(LineFilter, WarnShowsWarningsAfterABlankLine) {
  LineFilter f(LogLevel::kWarn);
  EXPECT_EQ(f.forward(kBanner), "NCCL version 2.28.3+cuda13.0");
  EXPECT_FALSE(f.forward(kInfo));
  EXPECT_EQ(f.forward(kWarn), std::string("\n") + kWarn);
  EXPECT_FALSE(f.forward(""));  // NCCL's own blank line before the WARN is not doubled
}

TEST(LineFilter, InfoShowsLinesAsNcclPrintsThem) {
  LineFilter f(LogLevel::kInfo);
  EXPECT_EQ(f.forward(kBanner), kBanner);
  EXPECT_EQ(f.forward(kInfo), kInfo);
  EXPECT_TRUE(f.forward(kWarn));
  EXPECT_FALSE(f.forward(kTrace));
  EXPECT_EQ(f.forward("  continuation of the previous message"),
            std::nullopt);  // follows the TRACE
  EXPECT_TRUE(f.forward(kInfo));
  EXPECT_EQ(f.forward("  continuation"), "  continuation");
}

TEST(LineFilter, TraceShowsEverything) {
  LineFilter f(LogLevel::kTrace);
  for (const char* line : {kBanner, kInfo, kWarn, kTrace}) EXPECT_TRUE(f.forward(line)) << line;
}

TEST(DebugFile, ExpandedAsNcclDoes) {
  EXPECT_EQ(expand_debug_file("nccl.%h.%p.log", "node1.cluster.local", 42), "nccl.node1.42.log");
  EXPECT_EQ(expand_debug_file("/logs/100%%-%h", "a/b%c", 7), "/logs/100%-a-b-c");
  EXPECT_EQ(expand_debug_file("x%q%", "h", 1), "x%q%");
}

/// Saves and restores the NCCL_DEBUG* variables around a test.
class DebugCaptureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : kNames) {
      const char* v = std::getenv(name);
      saved_.emplace_back(name, v ? std::optional<std::string>(v) : std::nullopt);
      unsetenv(name);
    }
    dir_ = std::filesystem::temp_directory_path() /
           ("collbench-capture-test-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    setenv("TMPDIR", dir_.c_str(), 1);
  }
  void TearDown() override {
    for (const auto& [name, value] : saved_) {
      if (value)
        setenv(name.c_str(), value->c_str(), 1);
      else
        unsetenv(name.c_str());
    }
    unsetenv("TMPDIR");
    std::filesystem::remove_all(dir_);
  }

  /// Writes `text` where NCCL would (NCCL_DEBUG_FILE as it is set now), opening it as NCCL does.
  static std::FILE* open_like_nccl() {
    const char* path = std::getenv("NCCL_DEBUG_FILE");
    EXPECT_NE(path, nullptr);
    std::FILE* f = std::fopen(path, "w");
    EXPECT_NE(f, nullptr);
    setvbuf(f, nullptr, _IOLBF, 0);
    return f;
  }

  static std::string read(std::FILE* f) {
    std::fflush(f);
    std::rewind(f);
    std::string text;
    char buffer[4096];
    std::size_t n;
    while ((n = std::fread(buffer, 1, sizeof(buffer), f)) > 0) text.append(buffer, n);
    return text;
  }

  static constexpr const char* kNames[] = {"NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE"};
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
  std::filesystem::path dir_;
};

// The ranks of a process (-t, -g) share one capture and poll it from their own threads: every
// line is read, parsed and forwarded exactly once.
TEST_F(DebugCaptureTest, RanksOfOneProcessPollTheSharedCaptureFromTheirThreads) {
  setenv("NCCL_DEBUG", "INFO", 1);
  std::FILE* out = std::tmpfile();
  constexpr int kLines = 3000;
  {
    DebugCapture capture("node1", out);
    std::FILE* nccl = open_like_nccl();
    std::atomic<bool> written{false};
    std::vector<std::thread> ranks;
    for (int r = 0; r < 4; ++r) {
      ranks.emplace_back([&] {
        while (!written.load()) {
          capture.poll();
          (void)capture.facts();
          (void)capture.take_tuning();
        }
        capture.poll();
      });
    }
    for (int i = 0; i < kLines; ++i) {
      std::fprintf(nccl, "%s\n", kInfo);
      if (i % 100 == 0) std::fflush(nccl);
    }
    std::fclose(nccl);
    written = true;
    for (auto& t : ranks) t.join();
    EXPECT_EQ(capture.facts().lines, static_cast<std::size_t>(kLines));
    EXPECT_EQ(capture.facts().network, "Socket");
  }
  const std::string text = read(out);
  EXPECT_EQ(static_cast<int>(std::count(text.begin(), text.end(), '\n')), kLines);
  std::fclose(out);
}

TEST_F(DebugCaptureTest, SilentUserSeesNothingButFactsAreCaptured) {
  std::FILE* out = std::tmpfile();
  {
    DebugCapture capture("node1", out);
    EXPECT_STREQ(std::getenv("NCCL_DEBUG"), "INFO");
    EXPECT_STREQ(std::getenv("NCCL_DEBUG_SUBSYS"), "INIT,NET,ENV");
    const std::string path = capture.path();
    EXPECT_EQ(std::getenv("NCCL_DEBUG_FILE"), path);
    EXPECT_EQ(path.rfind(dir_.string(), 0), 0u) << path;  // in TMPDIR

    std::FILE* nccl = open_like_nccl();
    std::fprintf(nccl,
                 "%s\n%s\nh:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/Sock",
                 kBanner, kInfo);
    capture.poll();  // the last line is incomplete: not parsed yet
    EXPECT_EQ(capture.facts().net_connections, 0);
    std::fprintf(nccl, "et/0\n");
    capture.poll();
    EXPECT_TRUE(capture.captured());
    EXPECT_EQ(capture.facts().network, "Socket");
    EXPECT_EQ(capture.facts().version, "2.28.3+cuda13.0");
    EXPECT_EQ(capture.facts().net_connections, 1);

    capture.restore_environment();
    EXPECT_EQ(std::getenv("NCCL_DEBUG"), nullptr);
    EXPECT_EQ(std::getenv("NCCL_DEBUG_SUBSYS"), nullptr);
    EXPECT_EQ(std::getenv("NCCL_DEBUG_FILE"), nullptr);
    EXPECT_FALSE(std::filesystem::exists(path));  // unlinked; NCCL keeps writing to its descriptor

    std::fprintf(nccl, "%s\n", kWarn);  // logged later in the run
    capture.poll();
    EXPECT_EQ(capture.recent_warnings(5).size(), 1u);
    std::fclose(nccl);
  }
  EXPECT_EQ(read(out), "");
  std::fclose(out);
}

TEST_F(DebugCaptureTest, InfoUserGetsTheLinesOnStdout) {
  setenv("NCCL_DEBUG", "INFO", 1);
  std::FILE* out = std::tmpfile();
  {
    DebugCapture capture("node1", out);
    EXPECT_STREQ(std::getenv("NCCL_DEBUG"), "INFO");
    EXPECT_EQ(std::getenv("NCCL_DEBUG_SUBSYS"), nullptr);  // NCCL's default already has INIT
    std::FILE* nccl = open_like_nccl();
    std::fprintf(nccl, "%s\n%s\n\n%s\n", kBanner, kInfo, kWarn);
    capture.poll();
    capture.restore_environment();
    EXPECT_STREQ(std::getenv("NCCL_DEBUG"), "INFO");
    EXPECT_EQ(std::getenv("NCCL_DEBUG_FILE"), nullptr);
    std::fprintf(nccl, "%s\n", kTrace);  // not at INFO
    std::fclose(nccl);
  }  // the destructor forwards what is left
  EXPECT_EQ(read(out), std::string(kBanner) + "\n" + kInfo + "\n\n" + kWarn + "\n");
  std::fclose(out);
}

TEST_F(DebugCaptureTest, WarnUserGetsWarningsInTheirOwnFile) {
  const std::string user_file = (dir_ / "nccl.%h.%p.log").string();
  setenv("NCCL_DEBUG", "WARN", 1);
  setenv("NCCL_DEBUG_SUBSYS", "COLL", 1);
  setenv("NCCL_DEBUG_FILE", user_file.c_str(), 1);
  std::FILE* out = std::tmpfile();
  {
    DebugCapture capture("node1.example.com", out);
    EXPECT_STREQ(std::getenv("NCCL_DEBUG"), "INFO");
    EXPECT_STREQ(std::getenv("NCCL_DEBUG_SUBSYS"), "INIT,NET,ENV");
    std::FILE* nccl = open_like_nccl();
    std::fprintf(nccl, "%s\n%s\n\n%s\n", kBanner, kInfo, kWarn);
    std::fclose(nccl);
    capture.poll();
    capture.restore_environment();
    EXPECT_STREQ(std::getenv("NCCL_DEBUG"), "WARN");
    EXPECT_STREQ(std::getenv("NCCL_DEBUG_SUBSYS"), "COLL");
    EXPECT_EQ(std::getenv("NCCL_DEBUG_FILE"), user_file);
  }
  EXPECT_EQ(read(out), "");  // not on stdout: the user named a file
  const auto expanded = dir_ / ("nccl.node1." + std::to_string(getpid()) + ".log");
  std::ifstream in(expanded);
  ASSERT_TRUE(in.good()) << expanded;
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), std::string("NCCL version 2.28.3+cuda13.0\n\n") + kWarn + "\n");
  std::fclose(out);
}

TEST_F(DebugCaptureTest, SettingsAndTuningLinesAreCollected) {
  std::FILE* out = std::tmpfile();
  {
    DebugCapture capture("node1", out, /*tuning=*/true);
    EXPECT_STREQ(std::getenv("NCCL_DEBUG_SUBSYS"), "INIT,NET,ENV,TUNING");
    std::FILE* nccl = open_like_nccl();
    std::fprintf(nccl,
                 "h:1:2 [0] NCCL INFO NET/OFI Adding NCCL_PROTO=simple to environment\n"
                 "h:1:2 [0] NCCL INFO NCCL_PROTO set by environment to simple\n"
                 "h:1:1 [0] NCCL INFO AllReduce: 1048576 Bytes -> Algo RING proto SIMPLE "
                 "channel{Lo..Hi}={0..7}\n");
    std::fclose(nccl);
    capture.poll();
    ASSERT_NE(capture.settings().find("NCCL_PROTO"), nullptr);
    EXPECT_EQ(capture.settings().find("NCCL_PROTO")->source, SettingSource::kPlugin);
    const auto choice = capture.take_tuning().find({"AllReduce", 1048576});
    ASSERT_TRUE(choice.has_value());
    EXPECT_EQ(choice->describe(), "RING/SIMPLE, 8 channels");
    // Taken, then forgotten: the next section sees only its own calls.
    EXPECT_TRUE(capture.take_tuning().choices().empty());
  }
  EXPECT_EQ(read(out), "");
  std::fclose(out);
}

}  // namespace
}  // namespace collbench::nccl
