// collbench-sweep: campaigns of collbench runs over node counts, partitions and settings,
// submitted to Slurm (or run locally through mpirun), tracked, collected and resumable.
// parse -> one subcommand -> one catch.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "collbench/cli.h"
#include "collbench/context.h"
#include "collbench/error.h"
#include "collbench/sweep/commands.h"
#include "collectives/collectives.h"

namespace collbench {
namespace {

constexpr const char* kFooter = R"(
Campaign files are YAML (examples in slurm/campaigns/). Results go to <results>/<campaign>/:
manifest.jsonl (what was submitted and how it ended: the record resume works from), one
<run>.jsonl of labelled collbench records per collected run, and runs/<run>/ (job output,
environment file, raw results).

Examples:
  collbench-sweep plan slurm/campaigns/p5-efa-nccl-algo.yaml
  collbench-sweep submit slurm/campaigns/p5-efa-nccl-algo.yaml
  collbench-sweep status slurm/campaigns/p5-efa-nccl-algo.yaml
  collbench-sweep wait slurm/campaigns/p5-efa-nccl-algo.yaml && collbench-sweep collect slurm/campaigns/p5-efa-nccl-algo.yaml
  collbench-sweep submit --retry-failed slurm/campaigns/p5-efa-nccl-algo.yaml
  collbench-sweep run --local slurm/campaigns/local-demo.yaml

Exit codes: 0 success, 1 a run produced wrong results, 2 bad usage or campaign file,
3 runtime failure (Slurm command missing or refusing, failed runs, timeout).)";

std::vector<std::string> known_tests() {
  std::vector<std::string> names;
  for (const auto* spec : all_specs()) names.emplace_back(spec->name);
  return names;
}

// The campaign's collbench options are checked by collbench's own parser.
void check_collbench_args(const std::vector<std::string>& argv) {
  std::vector<const char*> c_argv;
  for (const auto& a : argv) c_argv.push_back(a.c_str());
  c_argv.push_back(nullptr);
  parse_command_line(static_cast<int>(argv.size()), c_argv.data(), all_specs());
}

int run(int argc, char** argv) {
  CLI::App app{
      "collbench-sweep: collbench campaigns over node counts, partitions and settings on Slurm "
      "(or locally)",
      "collbench-sweep"};
  app.footer(kFooter);
  app.set_version_flag("--version", collbench_version());
  app.require_subcommand(1);

  sweep::SweepSettings settings;
  std::string campaign, results, collbench_bin, sbatch_template;
  double lock_timeout = 600;
  sweep::SubmitSettings submit;
  sweep::WaitSettings wait;
  sweep::LocalSettings local;
  bool json = false;

  auto common = [&](CLI::App* sub) {
    sub->add_option("campaign", campaign, "Campaign file (YAML)")->required();
    sub->add_option("--results", results,
                    "Results root (default: the campaign's output:, else results); the "
                    "campaign writes to <results>/<campaign>/");
    sub->add_option("--collbench", collbench_bin,
                    "collbench binary (default: the campaign's collbench:, else the one beside "
                    "collbench-sweep)");
    sub->add_option("--template", sbatch_template,
                    "sbatch template (default: slurm/collbench.sbatch of this checkout)");
    sub->add_option("--lock-timeout", lock_timeout,
                    "Seconds to wait for another collbench-sweep holding the "
                    "manifest (default 600)");
  };
  auto* plan =
      app.add_subcommand("plan", "Print the run matrix and the exact command line of every run");
  common(plan);
  plan->add_flag("--local", settings.local, "The local matrix (mpirun commands)");

  auto* sub = app.add_subcommand(
      "submit", "Submit every run not yet submitted (sbatch --parsable); record job ids");
  common(sub);
  sub->add_flag("--dry-run", submit.dry_run, "Print what would be submitted; change nothing");
  sub->add_flag("--retry-failed", submit.retry_failed, "Submit failed runs again");
  sub->add_flag("--array", submit.array, "Submit the repeats of each run as one job array");

  auto* st =
      app.add_subcommand("status", "Per-run state (pending, running, done, failed) and counts");
  common(st);
  st->add_flag("--json", json, "Print JSON");
  st->add_flag("--local", settings.local, "The local matrix");

  auto* wt = app.add_subcommand(
      "wait", "Wait until no submitted run is pending or running, showing progress");
  common(wt);
  wt->add_option("--timeout", wait.timeout_s,
                 "Give up after this many seconds (exit 3); 0 = never (default)");
  wt->add_option("--interval", wait.interval_s, "Seconds between squeue polls (default 5)");

  auto* co = app.add_subcommand("collect",
                                "Bring finished runs' results under the campaign with labels; "
                                "record failed runs and why");
  common(co);

  auto* rn =
      app.add_subcommand("run",
                         "Run the campaign: --local through mpirun on this host, else submit, "
                         "wait and collect");
  common(rn);
  bool run_local = false;
  rn->add_flag("--local", run_local,
               "Run on this host through mpirun (nodes x tasks per node ranks), no Slurm");
  rn->add_option("--mpirun", settings.mpirun,
                 "mpirun program for --local (default: mpirun on PATH)");
  rn->add_flag("--retry-failed", local.retry_failed, "Run failed runs again");
  rn->add_flag("--redo", local.redo,
               "With --local: run every run again, replacing collected results");
  rn->add_flag("--dry-run", submit.dry_run, "Without --local: print what would be submitted");
  rn->add_flag("--array", submit.array, "Without --local: submit repeats as job arrays");
  rn->add_option("--timeout", wait.timeout_s,
                 "Without --local: give up waiting after this many seconds");
  rn->add_option("--interval", wait.interval_s, "Without --local: seconds between squeue polls");

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    throw_usage("{}; run collbench-sweep --help", e.what());
  }

  settings.campaign_file = campaign;
  settings.rules.known_tests = known_tests();
  settings.rules.check_collbench_args = check_collbench_args;
  settings.results_root = results;
  settings.collbench = collbench_bin;
  settings.sbatch_template = sbatch_template;
  settings.lock_timeout_s = lock_timeout;
  std::error_code ec;
  settings.program_dir = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path();
  settings.out = stdout;
  settings.tty = ::isatty(::fileno(stdout)) == 1;
  submit.retry_failed = submit.retry_failed || local.retry_failed;

  if (*plan) return sweep::plan(settings);
  if (*sub) return sweep::submit(settings, submit);
  if (*st) return sweep::status(settings, json);
  if (*wt) return sweep::wait(settings, wait);
  if (*co) return sweep::collect(settings);
  if (*rn) {
    if (run_local) return sweep::run_local(settings, local);
    return sweep::run_slurm(settings, submit, wait);
  }
  return exit_status(ExitCode::kUsage);
}

}  // namespace
}  // namespace collbench

int main(int argc, char** argv) {
  try {
    return collbench::run(argc, argv);
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
