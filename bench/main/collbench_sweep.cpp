// collbench-sweep: campaigns of collbench runs over node counts, partitions and settings,
// submitted to Slurm (or run locally through mpirun), tracked, collected and resumable.
// parse -> run -> one catch.
#include <cstdio>

#include "campaign_rules/campaign_rules.h"
#include "collbench/error.h"
#include "collbench/sweep/cli.h"

int main(int argc, char** argv) {
  try {
    const auto parsed =
        collbench::sweep::parse_command_line(argc, argv, collbench::collbench_campaign_rules());
    if (!parsed.exit_text.empty()) {
      std::fputs(parsed.exit_text.c_str(), stdout);
      return 0;
    }
    return collbench::sweep::run_command(parsed.command);
  } catch (const collbench::Error& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "collbench-sweep: %s\n", e.what());
    return collbench::exit_status(e.code());
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "collbench-sweep: %s\n", e.what());
    return collbench::exit_status(collbench::ExitCode::kRuntime);
  }
}
