#include "collbench/sweep/cli.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "collbench/error.h"
#include "collbench/system.h"

namespace collbench::sweep {
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

// Where the options of the command line land before they become the command's settings.
struct Given {
  std::string campaign, results, collbench, sbatch_template;
  double lock_timeout_s = 600;
};

// The options every subcommand takes.
void add_common(CLI::App* sub, Given& given) {
  sub->add_option("campaign", given.campaign, "Campaign file (YAML)")->required();
  sub->add_option("--results", given.results,
                  "Results root (default: the campaign's output:, else results); the "
                  "campaign writes to <results>/<campaign>/");
  sub->add_option("--collbench", given.collbench,
                  "collbench binary (default: the campaign's collbench:, else the one beside "
                  "collbench-sweep)");
  sub->add_option("--template", given.sbatch_template,
                  "sbatch template (default: slurm/collbench.sbatch of this checkout)");
  sub->add_option("--lock-timeout", given.lock_timeout_s,
                  "Seconds to wait for another collbench-sweep holding the "
                  "manifest (default 600)");
}

void add_run_options(CLI::App* rn, SweepCommand& c) {
  rn->add_flag("--local", c.settings.local,
               "Run on this host through mpirun (nodes x tasks per node ranks), no Slurm");
  rn->add_option("--mpirun", c.settings.mpirun,
                 "mpirun program for --local (default: mpirun on PATH)");
  rn->add_flag("--retry-failed", c.local.retry_failed, "Run failed runs again");
  rn->add_flag("--redo", c.local.redo,
               "With --local: run every run again, replacing collected results");
  rn->add_flag("--dry-run", c.submit.dry_run, "Without --local: print what would be submitted");
  rn->add_flag("--array", c.submit.array, "Without --local: submit repeats as job arrays");
  rn->add_option("--timeout", c.wait.timeout_s,
                 "Without --local: give up waiting after this many seconds");
  rn->add_option("--interval", c.wait.interval_s, "Without --local: seconds between squeue polls");
}

// The settings that do not come from the command line: this program's directory and stdout.
void add_process_facts(SweepSettings& settings) {
  std::error_code ec;
  settings.program_dir = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path();
  settings.out = stdout;
  settings.tty = ::isatty(::fileno(stdout)) == 1;
}

// Every subcommand with its options; parsing fills `c` and `given`.
void add_subcommands(CLI::App& app, SweepCommand& c, Given& given) {
  auto add = [&](Subcommand which, const char* name, const char* help) {
    auto* sub = app.add_subcommand(name, help);
    add_common(sub, given);
    sub->callback([&c, which] { c.subcommand = which; });
    return sub;
  };
  auto* plan = add(Subcommand::kPlan, "plan",
                   "Print the run matrix and the exact command line of every run");
  plan->add_flag("--local", c.settings.local, "The local matrix (mpirun commands)");

  auto* sub = add(Subcommand::kSubmit, "submit",
                  "Submit every run not yet submitted (sbatch --parsable); record job ids");
  sub->add_flag("--dry-run", c.submit.dry_run, "Print what would be submitted; change nothing");
  sub->add_flag("--retry-failed", c.submit.retry_failed, "Submit failed runs again");
  sub->add_flag("--array", c.submit.array, "Submit the repeats of each run as one job array");

  auto* st = add(Subcommand::kStatus, "status",
                 "Per-run state (pending, running, done, failed) and counts");
  st->add_flag("--json", c.json, "Print JSON");
  st->add_flag("--local", c.settings.local, "The local matrix");

  auto* wt = add(Subcommand::kWait, "wait",
                 "Wait until no submitted run is pending or running, showing progress");
  wt->add_option("--timeout", c.wait.timeout_s,
                 "Give up after this many seconds (exit 3); 0 = never (default)");
  wt->add_option("--interval", c.wait.interval_s, "Seconds between squeue polls (default 5)");

  add(Subcommand::kCollect, "collect",
      "Bring finished runs' results under the campaign with labels; record failed runs and why");

  add_run_options(add(Subcommand::kRun, "run",
                      "Run the campaign: --local through mpirun on this host, else submit, wait "
                      "and collect"),
                  c);
}

}  // namespace

ParsedCommandLine parse_command_line(int argc, const char* const* argv, CampaignRules rules) {
  CLI::App app{
      "collbench-sweep: collbench campaigns over node counts, partitions and settings on Slurm "
      "(or locally)",
      "collbench-sweep"};
  app.footer(kFooter);
  app.set_version_flag("--version", collbench_version());
  app.require_subcommand(1);
  ParsedCommandLine parsed;
  SweepCommand& c = parsed.command;
  Given given;
  add_subcommands(app, c, given);

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    std::ostringstream out;
    app.exit(e, out, out);
    parsed.exit_text = out.str();
    return parsed;
  } catch (const CLI::ParseError& e) {
    throw_usage("{}; run collbench-sweep --help", e.what());
  }

  c.settings.campaign_file = given.campaign;
  c.settings.rules = std::move(rules);
  c.settings.results_root = given.results;
  c.settings.collbench = given.collbench;
  c.settings.sbatch_template = given.sbatch_template;
  c.settings.lock_timeout_s = given.lock_timeout_s;
  // run's --retry-failed is also submit's, for run without --local.
  c.submit.retry_failed = c.submit.retry_failed || c.local.retry_failed;
  add_process_facts(c.settings);
  return parsed;
}

}  // namespace collbench::sweep
