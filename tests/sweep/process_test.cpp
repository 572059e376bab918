// Child processes from argv arrays: output, exit status, signals, time limits, environment.
#include "collbench/sweep/process.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "collbench/error.h"
#include "collbench/sweep/progress.h"

namespace collbench::sweep {
namespace {

TEST(Process, CapturesOutputAndExitStatus) {
  const auto r = run_process({{"sh", "-c", "echo out; echo err >&2; exit 3"}});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_EQ(r.describe(), "exit status 3");
}

TEST(Process, ArgumentsAreNeverParsedByAShell) {
  const std::string tricky = "$(echo no) `echo no`; echo no | x > y";
  const auto r = run_process({{"printf", "%s", tricky}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.out, tricky);
}

TEST(Process, EnvironmentIsExactlyTheOneGiven) {
  const std::string value = "line 1\nline 2 $(x) 'q' \"d\"";
  ProcessSpec spec{{"/usr/bin/env"},
                   std::vector<std::string>{"ONLY=" + value, "PATH=/usr/bin:/bin"}};
  const auto r = run_process(spec);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.out, "ONLY=" + value + "\nPATH=/usr/bin:/bin\n");
}

TEST(Process, SignalsAndTimeouts) {
  const auto killed = run_process({{"sh", "-c", "kill -9 $$"}});
  EXPECT_EQ(killed.signal, 9);
  EXPECT_FALSE(killed.ok());
  EXPECT_NE(killed.describe().find("signal 9"), std::string::npos);

  const auto t0 = std::chrono::steady_clock::now();
  ProcessSpec slow{{"sleep", "30"}};
  slow.timeout_s = 0.3;
  slow.grace_s = 1;
  const auto r = run_process(slow);
  EXPECT_TRUE(r.timed_out);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));

  // A child ignoring SIGTERM is killed after the grace period.
  ProcessSpec stubborn{{"sh", "-c", "trap '' TERM; sleep 30"}};
  stubborn.timeout_s = 0.2;
  stubborn.grace_s = 0.3;
  const auto s = run_process(stubborn);
  EXPECT_TRUE(s.timed_out);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
}

TEST(Process, OutputToAFile) {
  const auto file =
      std::filesystem::temp_directory_path() / ("collbench-proc-" + std::to_string(::getpid()));
  std::filesystem::remove(file);
  ProcessSpec spec{{"sh", "-c", "echo one; echo two >&2"}};
  spec.output_file = file;
  ASSERT_TRUE(run_process(spec).ok());
  std::ifstream in(file);
  std::stringstream s;
  s << in.rdbuf();
  EXPECT_EQ(s.str(), "one\ntwo\n");
  std::filesystem::remove(file);
}

TEST(Process, MissingProgramIsARuntimeErrorNamingIt) {
  try {
    run_process({{"collbench-no-such-program"}});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kRuntime);
    EXPECT_NE(std::string(e.what()).find("collbench-no-such-program"), std::string::npos);
  }
  EXPECT_FALSE(find_program("collbench-no-such-program"));
  EXPECT_TRUE(find_program("sh"));
}

TEST(Process, LargeOutputDoesNotDeadlock) {
  const auto r =
      run_process({{"sh", "-c", "head -c 1000000 /dev/zero; head -c 1000000 /dev/zero >&2"}});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.out.size(), 1000000u);
  EXPECT_EQ(r.err.size(), 1000000u);
}

std::string run_progress(bool tty) {
  std::FILE* f = std::tmpfile();
  {
    Progress p(f, tty, 4, 1);
    p.start("run-a");
    p.finish("ok run-a");
    p.start("run-b");
    p.finish("FAILED run-b: why");
  }
  std::rewind(f);
  std::string text;
  for (int c; (c = std::fgetc(f)) != EOF;) text += static_cast<char>(c);
  std::fclose(f);
  return text;
}

TEST(Progress, PlainLinesOnAPipe) {
  const std::string text = run_progress(false);
  EXPECT_EQ(text.find('\r'), std::string::npos) << text;
  EXPECT_EQ(text.find("\x1b["), std::string::npos) << text;
  EXPECT_NE(text.find("[2/4] run-a: started\n"), std::string::npos) << text;
  EXPECT_NE(text.find("ok run-a\n[2/4]  50% · ETA "), std::string::npos) << text;
  EXPECT_NE(text.find("FAILED run-b: why\n[3/4]  75% · ETA 0:"), std::string::npos) << text;
}

TEST(Progress, OneRedrawnLineOnATerminal) {
  const std::string text = run_progress(true);
  EXPECT_NE(text.find("\r\x1b[K[1/4]  25% · ETA --:-- · elapsed 0:00 · run-a (0:00)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\r\x1b[Kok run-a\n"), std::string::npos) << text;
  EXPECT_NE(text.find("[2/4]  50% · ETA 0:"), std::string::npos) << text;
  EXPECT_EQ(Progress::format_duration(65), "1:05");
  EXPECT_EQ(Progress::format_duration(3723), "1:02:03");
}

}  // namespace
}  // namespace collbench::sweep
