#include "collbench/sweep/cli.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <sstream>

#include "collbench/cli_values.h"
#include "collbench/error.h"
#include "collbench/request.h"
#include "collbench/request_cli.h"
#include "collbench/sweep/did_you_mean.h"
#include "collbench/system.h"
#include "collbench/text.h"

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
  collbench-sweep hunt --nodes 16 --partition gpu -o results/hunt-1 && \
    sbatch --exclude=$(paste -sd, results/hunt-1/suspects.txt) ...

Exit codes: 0 success, 1 a run produced wrong results, 2 bad usage or campaign file,
3 runtime failure (Slurm command missing or refusing, failed runs, timeout).)";

// The subcommands, in the order --help lists them.
const std::vector<std::string> kSubcommands{"plan",    "submit", "status", "wait",
                                            "collect", "run",    "hunt"};

// Bounds of the numeric options, which messages state: a month of seconds, and squeue polls no
// more often than ten times a second.
constexpr double kMaxSeconds = 30 * 86400.0;
constexpr double kMinInterval = 0.1;
constexpr double kMaxInterval = 3600;

// Where the options of the command line land before they become the command's settings.
struct Given {
  std::string campaign, results, collbench, sbatch_template;
  double lock_timeout_s = 600;
  std::string hunt_tests = "all_reduce", hunt_split = "pairs", hunt_threshold = "25%";
  /// The hunt's collbench options as given, by the flag MeasureRequest writes them with.
  RequestTexts hunt_request;
};

// An unknown first word is a mistyped subcommand: say so (CLI11 would call it missing).
void check_subcommand(int argc, const char* const* argv) {
  if (argc < 2) return;
  const std::string word = argv[1];
  if (word.empty() || word[0] == '-') return;
  for (const auto& s : kSubcommands) {
    if (word == s) return;
  }
  const std::string all = fmt::format("{}", fmt::join(kSubcommands, ", "));
  if (const auto guess = closest_word(word, kSubcommands)) {
    throw_usage(
        "unknown subcommand '{}'; did you mean '{}'? (the subcommands are {}); run "
        "collbench-sweep --help",
        shown(word), *guess, all);
  }
  throw_usage("unknown subcommand '{}'; the subcommands are {}; run collbench-sweep --help",
              shown(word), all);
}

// The message for arguments the subcommand does not take, with the option meant when one is
// close to a given one.
std::string unexpected_arguments(const CLI::App& app, int argc, const char* const* argv,
                                 const std::string& parser_message) {
  const CLI::App* sub = nullptr;
  for (const auto* candidate : app.get_subcommands({})) {
    if (argc > 1 && candidate->get_name() == argv[1]) sub = candidate;
  }
  if (sub) {
    std::vector<std::string> names;
    for (const auto* option : sub->get_options()) {
      for (const auto& n : option->get_lnames()) names.push_back("--" + n);
    }
    for (int i = 2; i < argc; ++i) {
      const std::string arg = argv[i];
      if (!arg.starts_with("--")) continue;
      const std::string name = arg.substr(0, arg.find('='));
      if (std::find(names.begin(), names.end(), name) != names.end()) continue;
      if (const auto guess = closest_word(name, names)) {
        return fmt::format("{} does not take {}; did you mean {}?", sub->get_name(), shown(name),
                           *guess);
      }
      return fmt::format("{} does not take {}; its options are {}", sub->get_name(), shown(name),
                         fmt::join(names, ", "));
    }
  }
  return shown(parser_message, 200);
}

// Seconds given on the command line: a finite number in [min, max], said with the bound.
void check_seconds(const char* option, double value, double min, double max, const char* meaning) {
  if (std::isfinite(value) && value >= min && value <= max) return;
  throw_usage("{} {}: {} must be from {} to {} seconds; run collbench-sweep --help", option, value,
              meaning, min, max);
}

// Whether the subcommand that was parsed got `option` on the command line.
bool given_option(const CLI::App& app, const std::string& option) {
  for (const auto* sub : app.get_subcommands()) {
    const auto* o = sub->get_option_no_throw(option);
    if (o && o->count() > 0) return true;
  }
  return false;
}

// A path or program given on the command line must name something.
void check_named(const char* what, const std::string& value) {
  if (!value.empty()) return;
  throw_usage("{} is empty; give a path (or leave the option out); run collbench-sweep --help",
              what);
}

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
                  "manifest (default 600; 0 to 2592000)");
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
                 "Without --local: give up waiting after this many seconds (0 = never; up to "
                 "2592000)");
  rn->add_option("--interval", c.wait.interval_s,
                 "Without --local: seconds between squeue polls (0.1 to 3600)");
}

// The settings that do not come from the command line: this program's directory and stdout.
void add_process_facts(SweepSettings& settings) {
  std::error_code ec;
  settings.program_dir = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path();
  settings.out = stdout;
  settings.tty = ::isatty(::fileno(stdout)) == 1;
}

// hunt: one allocation, a tournament, the suspects retested (collbench/sweep/hunt.h).
void add_hunt(CLI::App& app, SweepCommand& c, Given& given) {
  auto* h = app.add_subcommand(
      "hunt",
      "Find the slow node or link of an allocation: one job runs a tournament of node pairs, "
      "collbench-report --suspects, and a retest of each suspect with a known-good node; writes "
      "suspects.txt (the confirmed bad hosts) and summary.txt in -o DIR");
  h->callback([&c] { c.subcommand = Subcommand::kHunt; });
  HuntSettings& s = c.hunt;
  h->add_option("--nodes", s.nodes, "Nodes of the allocation (4 or more)")->required();
  h->add_option("--partition", s.partition, "Slurm partition (default: Slurm's default)");
  h->add_option("--tasks-per-node", s.tasks_per_node, "Ranks per node (default 1)");
  h->add_option("--tests", given.hunt_tests,
                "collbench tests, comma-separated (default all_reduce)");
  h->add_option("--split", given.hunt_split,
                "collbench --split modes, comma-separated, each a run: pairs, sample:K, rail, "
                "node (default pairs; pairs or sample:K required)");
  h->add_option("--repeats", s.repeats,
                "Runs of each mode, and of each retest (default 1; 1 to 100)");
  h->add_option("--topology", s.topology,
                "The network's tree: slurm (scontrol show topology, in the job), Slurm's "
                "topology.conf or EC2's describe-instance-topology JSON; names slow switch "
                "uplinks and retests them");
  h->add_option("--topology-hosts", s.topology_hosts,
                "With EC2's topology: HOST INSTANCE-ID lines naming each instance's host");
  h->add_option("--threshold", given.hunt_threshold,
                "A retest this far below the good pair is slow (default 25%)");
  h->add_option("--launcher", s.launcher, "srun (default) or mpirun, inside the job");
  h->add_option("--site-env", s.site_env,
                "Site environment file sourced in the job: a name in slurm/env or a path");
  h->add_option("--time", s.time_limit, "sbatch --time of the job (default: the partition's)");
  h->add_option("--timeout", s.timeout_s,
                "Give up waiting for the job after this many seconds (exit 3); 0 = never");
  h->add_option("--interval", s.interval_s, "Seconds between squeue polls (default 2)");
  h->add_option("--collbench", s.collbench, "collbench binary (default: the one beside)");
  h->add_option("--collbench-report", s.collbench_report,
                "collbench-report binary (default: the one beside)");
  h->add_option("--template", s.sbatch_template,
                "the job script (default: slurm/collbench-hunt.sbatch of this checkout)");
  h->add_option("-o,--output", s.output, "Directory to write (new or empty)")->required();
  h->add_flag("--inside", s.inside, "Run the steps (inside the job the hunt submits)")->group("");
  // collbench's request options, spelled as collbench spells them; -o (the hunt's output) and
  // --timeout (its wait) stay the hunt's.
  MeasureRequest defaults = s.request;
  defaults.tests.clear();
  add_request_options(
      *h, given.hunt_request,
      fmt::format("collbench options (the hunt's defaults: {})", fmt::join(to_argv(defaults), " ")),
      [](std::string_view help, std::string_view flag) {
        return fmt::format("collbench {}: {}", flag, help);
      });
}

// A percentage ("25%") or a fraction below 1 ("0.25").
double parse_fraction(const char* option, const std::string& text) {
  std::string t = text;
  const bool pct = !t.empty() && t.back() == '%';
  if (pct) t.pop_back();
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (t.empty() || !end || *end != '\0' || !std::isfinite(v) || (!pct && v >= 1)) {
    throw_usage(
        "{} {}: give a percentage such as 25% (or a fraction below 1); run "
        "collbench-sweep hunt --help",
        option, shown(text));
  }
  return pct ? v / 100 : v;
}

// hunt's checks; the collbench arguments are checked as collbench would.
void finish_hunt(SweepCommand& c, const Given& given, const CampaignRules& rules) {
  HuntSettings& s = c.hunt;
  s.request.tests = split(given.hunt_tests, ',');
  s.splits = split(given.hunt_split, ',');
  read_request_texts(given.hunt_request, s.request);
  // The hunt's sizes grow by a factor unless a step is given: collbench takes one of the two.
  if (collbench::given(given.hunt_request, "-i") && !collbench::given(given.hunt_request, "-f")) {
    s.request.step_factor.reset();
  }
  for (const auto& [what, list] :
       {std::pair{"--tests", &s.request.tests}, std::pair{"--split", &s.splits}}) {
    if (std::any_of(list->begin(), list->end(), [](const auto& w) { return w.empty(); })) {
      throw_usage("{} {}: an empty name in the list; run collbench-sweep hunt --help", what,
                  shown(what == std::string("--tests") ? given.hunt_tests : given.hunt_split));
    }
  }
  s.threshold = parse_fraction("--threshold", given.hunt_threshold);
  check_seconds("--timeout", s.timeout_s, 0, kMaxSeconds, "the wait (0 = no limit)");
  check_seconds("--interval", s.interval_s, kMinInterval, kMaxInterval,
                "the time between squeue polls");
  check_hunt_settings(s);
  if (rules.check_collbench_args) {
    for (const auto& mode : s.splits) {
      std::vector<std::string> argv{"collbench"};
      for (auto& a : to_argv(s.request_for(mode))) argv.push_back(std::move(a));
      rules.check_collbench_args(argv);
    }
  }
  std::error_code ec;
  s.program_dir = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path();
  s.out = stdout;
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
                 "Give up after this many seconds (exit 3); 0 = never (default); up to 2592000");
  wt->add_option("--interval", c.wait.interval_s,
                 "Seconds between squeue polls (default 5; 0.1 to 3600)");

  add(Subcommand::kCollect, "collect",
      "Bring finished runs' results under the campaign with labels; record failed runs and why");

  add_run_options(add(Subcommand::kRun, "run",
                      "Run the campaign: --local through mpirun on this host, else submit, wait "
                      "and collect"),
                  c);
  add_hunt(app, c, given);
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

  check_subcommand(argc, argv);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    std::ostringstream out;
    app.exit(e, out, out);
    parsed.exit_text = out.str();
    return parsed;
  } catch (const CLI::ExtrasError& e) {
    throw_usage("{}; run collbench-sweep --help", unexpected_arguments(app, argc, argv, e.what()));
  } catch (const CLI::ParseError& e) {
    throw_usage("{}; run collbench-sweep --help", shown(e.what(), 200));
  }
  refuse_missing_values(app, "collbench-sweep");

  if (c.subcommand == Subcommand::kHunt) {
    if (given_option(app, "--collbench")) check_named("--collbench", c.hunt.collbench.string());
    if (given_option(app, "--collbench-report"))
      check_named("--collbench-report", c.hunt.collbench_report.string());
    if (given_option(app, "--template")) check_named("--template", c.hunt.sbatch_template.string());
    finish_hunt(c, given, rules);
    return parsed;
  }
  if (given.campaign.empty()) {
    throw_usage(
        "the campaign file name is empty; give the path of a campaign YAML file; run "
        "collbench-sweep --help");
  }
  if (given_option(app, "--results")) check_named("--results", given.results);
  if (given_option(app, "--collbench")) check_named("--collbench", given.collbench);
  if (given_option(app, "--template")) check_named("--template", given.sbatch_template);
  if (given_option(app, "--mpirun")) check_named("--mpirun", c.settings.mpirun);
  check_seconds("--lock-timeout", given.lock_timeout_s, 0, kMaxSeconds,
                "the wait for the manifest's lock");
  check_seconds("--timeout", c.wait.timeout_s, 0, kMaxSeconds, "the wait (0 = no limit)");
  check_seconds("--interval", c.wait.interval_s, kMinInterval, kMaxInterval,
                "the time between squeue polls");

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
