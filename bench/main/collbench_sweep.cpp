// collbench-sweep: campaigns of collbench runs over node counts, partitions and settings,
// submitted to Slurm (or run locally through mpirun), tracked, collected and resumable.
// parse -> run -> one catch.
#include <csignal>
#include <cstdio>

#include "campaign_rules/campaign_rules.h"
#include "collbench/error.h"
#include "collbench/sweep/cli.h"

namespace {

// Every line goes out flushed, and a failed write leaves the stream's error flag set: one look
// at the end sees a plan, a status or a progress line that did not reach a full disk or a
// closed pipe. Such a command did not do its job: exit 3, whatever it returned.
int checked_output(int rc) {
  if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return rc;
  std::fputs(
      "collbench-sweep: cannot write to standard output (a full disk or a closed pipe); "
      "its output is incomplete\n",
      stderr);
  return collbench::exit_status(collbench::ExitCode::kRuntime);
}

}  // namespace

int main(int argc, char** argv) {
  // A closed pipe on stdout is a failed write (exit 3), not a silent death by SIGPIPE. The
  // programs the sweep starts get the default back (process.cpp resets it when it spawns).
  std::signal(SIGPIPE, SIG_IGN);
  try {
    const auto parsed =
        collbench::sweep::parse_command_line(argc, argv, collbench::collbench_campaign_rules());
    if (!parsed.exit_text.empty()) {
      std::fputs(parsed.exit_text.c_str(), stdout);
      return checked_output(0);
    }
    return checked_output(collbench::sweep::run_command(parsed.command));
  } catch (const collbench::Error& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "collbench-sweep: %s\n", e.what());
    const int rc = collbench::exit_status(e.code());
    // Bad usage stays 2 even when stdout is gone too: that is the first thing to fix.
    return e.code() == collbench::ExitCode::kUsage ? rc : checked_output(rc);
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "collbench-sweep: %s\n", e.what());
    return collbench::exit_status(collbench::ExitCode::kRuntime);
  }
}
