#include "collbench/sweep/hunt.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "collbench/context.h"
#include "collbench/error.h"
#include "collbench/record.h"
#include "collbench/result.h"
#include "collbench/stats.h"
#include "collbench/sweep/collect.h"
#include "collbench/sweep/env.h"
#include "collbench/sweep/process.h"
#include "collbench/sweep/slurm.h"
#include "collbench/text.h"
#include "files.h"
#include "lists.h"

namespace collbench::sweep {

MeasureRequest default_hunt_request() {
  MeasureRequest r;
  r.tests = {"all_reduce"};
  r.min_bytes = 1 << 20;
  r.max_bytes = 64 << 20;
  r.step_factor = 4;
  r.iters = 20;
  r.warmup = 5;
  return r;
}

MeasureRequest HuntSettings::request_for(const std::string& split) const {
  MeasureRequest r = request;
  if (!split.empty()) r.split = split;
  return r;
}

namespace fs = std::filesystem;
namespace {

// A hunt is one allocation: wide enough for a tournament to name a host (collbench-report
// compares a host's pairs with at least three others) and small enough for a split name.
constexpr int kMinNodes = 4;
constexpr int kMaxNodes = 100000;
constexpr int kMaxRepeats = 100;

// A split mode as a file name: "sample:8" -> "sample-8".
std::string split_file_name(const std::string& split) {
  std::string s = split;
  std::replace(s.begin(), s.end(), ':', '-');
  return s;
}

bool valid_split(const std::string& s) {
  if (s == "pairs" || s == "rail" || s == "node") return true;
  if (!s.starts_with("sample:") || s.size() == 7) return false;
  return std::all_of(s.begin() + 7, s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool pair_split(const std::string& s) { return s == "pairs" || s.starts_with("sample:"); }

}  // namespace

Bandwidths largest_size_bandwidths(const fs::path& jsonl, bool pairs_only, std::uint64_t from) {
  std::ifstream in(jsonl);
  if (from > 0) in.seekg(static_cast<std::streamoff>(from));
  std::map<std::string, std::pair<std::uint64_t, std::vector<double>>> by_test;
  for (std::string line; std::getline(in, line);) {
    const auto row = result_row_from_line(line);
    if (!row || row->status != RowStatus::kOk || !row->busbw_gbps) continue;
    if (pairs_only) {
      const RowGroup* group = row->group ? &*row->group : nullptr;
      if (!group || (group->mode != SplitMode::kPairs && group->mode != SplitMode::kSample) ||
          group->hosts.size() != 2) {
        continue;
      }
    }
    const std::string key = fmt::format("{} {}", row->test, name(row->placement));
    auto& [largest, values] = by_test[key];
    if (row->bytes > largest) {
      largest = row->bytes;
      values.clear();
    }
    if (row->bytes == largest) values.push_back(row->busbw());
  }
  Bandwidths out;
  for (auto& [key, entry] : by_test) {
    if (!entry.second.empty()) out[key] = median(entry.second);
  }
  return out;
}

namespace {

// The largest tournament round in `jsonl` plus one: how many rounds ran.
int rounds_in(const fs::path& jsonl) {
  std::ifstream in(jsonl);
  int rounds = 0;
  for (std::string line; std::getline(in, line);) {
    const auto row = result_row_from_line(line);
    if (row && row->group) rounds = std::max(rounds, row->group->round + 1);
  }
  return rounds;
}

fs::path beside_program(const HuntSettings& s, const fs::path& given, const char* name) {
  if (!given.empty()) {
    if (given.string().find('/') == std::string::npos) return given;
    return fs::absolute(given).lexically_normal();
  }
  if (!s.program_dir.empty() && fs::exists(s.program_dir / name)) {
    return (s.program_dir / name).lexically_normal();
  }
  return name;
}

fs::path hunt_template(const HuntSettings& s) {
  if (!s.sbatch_template.empty()) return fs::absolute(s.sbatch_template).lexically_normal();
  const auto beside = s.program_dir / ".." / "slurm" / "collbench-hunt.sbatch";
  return fs::absolute(!s.program_dir.empty() && fs::exists(beside)
                          ? beside
                          : fs::path("slurm/collbench-hunt.sbatch"))
      .lexically_normal();
}

fs::path site_env_path(const HuntSettings& s, const fs::path& sbatch_template) {
  if (s.site_env.empty()) return {};
  fs::path p = s.site_env;
  if (s.site_env.find('/') == std::string::npos && !s.site_env.ends_with(".sh")) {
    p = sbatch_template.parent_path() / "env" / (s.site_env + ".sh");
  }
  return fs::absolute(p).lexically_normal();
}

// The launcher for `hosts` (all of the allocation when empty) with tasks_per_node ranks each.
std::vector<std::string> launcher(const HuntSettings& s, int nodes,
                                  const std::vector<std::string>& hosts) {
  const std::string tpn = std::to_string(s.tasks_per_node);
  const std::string np = std::to_string(nodes * s.tasks_per_node);
  if (s.launcher == "mpirun") {
    std::vector<std::string> a{"mpirun",    "-np", np, "--map-by", "ppr:" + tpn + ":node",
                               "--bind-to", "none"};
    if (!hosts.empty()) {
      std::vector<std::string> slots;
      for (const auto& h : hosts) slots.push_back(h + ":" + tpn);
      a.push_back("-H");
      a.push_back(fmt::format("{}", fmt::join(slots, ",")));
    }
    return a;
  }
  const char* mpi = std::getenv("COLLBENCH_SRUN_MPI");
  std::vector<std::string> a{"srun",
                             fmt::format("--mpi={}", mpi && *mpi ? mpi : "pmix"),
                             "--kill-on-bad-exit=1",
                             "--nodes=" + std::to_string(nodes),
                             "--ntasks=" + np,
                             "--ntasks-per-node=" + tpn};
  if (!hosts.empty()) a.push_back(fmt::format("--nodelist={}", fmt::join(hosts, ",")));
  return a;
}

// --- the network's tree ---------------------------------------------------------------------

constexpr std::string_view kSlurmTopology = "slurm";

// What `scontrol show topology` prints; throws Error(kUsage) when Slurm knows no tree.
std::string slurm_topology_text() {
  const std::string text = Slurm().topology();
  if (text.find("SwitchName=") == std::string::npos) {
    throw_usage(
        "--topology slurm: scontrol show topology named no switch ({}); give Slurm a tree "
        "(TopologyPlugin=topology/tree and topology.conf) or give --topology FILE",
        trim(text).empty() ? std::string("it printed nothing")
                           : std::string(trim(text.substr(0, text.find('\n')))));
  }
  return text;
}

std::optional<fs::path> topology_hosts_file(const HuntSettings& s) {
  if (s.topology_hosts.empty()) return std::nullopt;
  return s.topology_hosts;
}

// The topology file the report and the retests read: the one given, or (slurm) what Slurm
// prints now, written to the hunt's folder so that the hunt's report shows the tree it used.
fs::path topology_file(const HuntSettings& s) {
  if (s.topology != kSlurmTopology) return s.topology;
  const fs::path file = s.output / "topology.txt";
  const std::string text = slurm_topology_text();
  read_slurm_topology(text, "scontrol show topology");
  write_file_atomic(file, text, 0644);
  return file;
}

// --- inside the allocation ----------------------------------------------------------------

struct Inside {
  const HuntSettings& s;
  fs::path collbench, report;

  // Runs one collbench measurement; its console output goes to logs/<name>.out.
  ProcessResult measure(const std::vector<std::string>& argv, const std::string& name) const {
    ProcessSpec spec{argv, std::nullopt, s.output / "logs" / (name + ".out")};
    spec.supervised = true;
    return run_process(spec);
  }

  std::vector<std::string> collbench_argv(int nodes, const std::vector<std::string>& hosts,
                                          const fs::path& jsonl, const std::string& split) const {
    auto argv = launcher(s, nodes, hosts);
    argv.push_back(collbench.string());
    for (auto& a : to_argv(s.request_for(split))) argv.push_back(std::move(a));
    argv.push_back("--jsonl");
    argv.push_back(jsonl.string());
    return argv;
  }
};

std::vector<std::string> allocation_hosts() {
  const char* list = std::getenv("SLURM_JOB_NODELIST");
  if (!list || !*list) list = std::getenv("SLURM_NODELIST");
  if (!list || !*list) throw_runtime("SLURM_JOB_NODELIST is not set; the job has no node list");
  const auto r =
      run_process({{"scontrol", "show", "hostnames", list}, std::nullopt, std::nullopt, 60});
  if (!r.ok()) {
    throw_runtime("scontrol show hostnames {} failed ({}): {}", list, r.describe(),
                  std::string(trim(r.err)));
  }
  std::vector<std::string> hosts;
  std::istringstream lines(r.out);
  for (std::string h; std::getline(lines, h);) {
    if (!trim(h).empty()) hosts.emplace_back(trim(h));
  }
  return hosts;
}

void write_text(const fs::path& file, const std::string& text) {
  write_file_atomic(file, text, 0644);
}

int run_inside(const HuntSettings& s) {
  if (!std::getenv("SLURM_JOB_ID")) {
    throw_usage(
        "hunt --inside runs inside the job that `collbench-sweep hunt` submits; run "
        "collbench-sweep hunt without --inside");
  }
  const fs::path status_file = s.output / "exit_status";
  // Whatever ends the steps early, the status says so (the submitting side reads it).
  write_text(status_file, "3\n");
  Inside in{s, beside_program(s, s.collbench, "collbench"),
            beside_program(s, s.collbench_report, "collbench-report")};
  fs::create_directories(s.output / "tournament");
  fs::create_directories(s.output / "retest");
  fs::create_directories(s.output / "logs");

  HuntOutcome o;
  o.job_id = std::getenv("SLURM_JOB_ID");
  o.hosts = allocation_hosts();
  o.threshold = s.threshold;
  const int n = static_cast<int>(o.hosts.size());
  if (n < kMinNodes) {
    throw_runtime("the allocation has {} nodes; the hunt needs at least {}", n, kMinNodes);
  }

  // The tournaments.
  Bandwidths tournament;
  std::vector<fs::path> pair_files;
  for (const auto& split : s.splits) {
    for (int r = 0; r < s.repeats; ++r) {
      const std::string name = fmt::format("{}-r{}", split_file_name(split), r);
      const fs::path jsonl = s.output / "tournament" / (name + ".jsonl");
      const auto argv = in.collbench_argv(n, {}, jsonl, split);
      const auto t0 = std::chrono::steady_clock::now();
      const auto result = in.measure(argv, name);
      const double secs =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (!result.ok()) {
        throw_runtime("the tournament {} failed ({}); see {}", name, result.describe(),
                      (s.output / "logs" / (name + ".out")).string());
      }
      const int rounds = rounds_in(jsonl);
      o.steps.push_back(fmt::format("{}: {} rounds in {:.1f} s ({:.1f} s per round)", name, rounds,
                                    secs, rounds ? secs / rounds : secs));
      if (pair_split(split)) pair_files.push_back(jsonl);
      if (r == 0) o.commands.push_back(shell_join(argv));
    }
  }

  // Pair evidence from every pair tournament at once: the median pair of all of them.
  {
    std::vector<Bandwidths> per_tournament;
    for (const auto& f : pair_files) per_tournament.push_back(largest_size_bandwidths(f, true));
    tournament = median_bandwidths(per_tournament);
  }

  // Which hosts and links stand out.
  std::vector<std::string> report_argv{in.report.string()};
  for (const auto& f : pair_files) report_argv.push_back(f.string());
  for (const auto& split : s.splits) {
    if (pair_split(split)) continue;
    for (int r = 0; r < s.repeats; ++r) {
      report_argv.push_back(
          (s.output / "tournament" / fmt::format("{}-r{}.jsonl", split_file_name(split), r))
              .string());
    }
  }
  // The tree: the report judges uplinks from it, the retests pair hosts by it.
  std::vector<std::string> topology_argv;
  if (!s.topology.empty()) {
    const fs::path file = topology_file(s);
    o.topology = read_topology_file(file, topology_hosts_file(s));
    // EC2's tree names instances: without a hosts file the tournament's contexts name them.
    if (!pair_files.empty())
      o.topology->rename_hosts(hosts_by_instance(context_hosts(pair_files.front())));
    topology_argv = {"--topology", file.string()};
    if (!s.topology_hosts.empty()) {
      topology_argv.insert(topology_argv.end(), {"--topology-hosts", s.topology_hosts.string()});
    }
    if (const auto missing = o.topology->missing(o.hosts); !missing.empty()) {
      o.steps.push_back(
          fmt::format("not in the topology {} (their pairs are judged without it): {}",
                      file.string(), fmt::join(missing, " ")));
    }
  }
  report_argv.insert(report_argv.end(), topology_argv.begin(), topology_argv.end());
  report_argv.push_back("--suspects");
  // The typed record, not the text meant for people (written beside it from the same record).
  std::vector<std::string> json_argv = report_argv;
  json_argv.push_back("--json");
  const auto suspects = run_process({json_argv, std::nullopt, std::nullopt, 600});
  write_text(s.output / "suspects-evidence.txt", suspects.err);
  if (!suspects.ok()) {
    throw_runtime("collbench-report --suspects failed ({}): {}", suspects.describe(),
                  std::string(trim(suspects.err)));
  }
  o.suspects = parse_suspects(suspects.out);
  write_text(s.output / "suspects-report.txt", suspects_text(read_suspects_json(suspects.out)));
  o.commands.push_back(shell_join(report_argv));

  // The retests.
  // Each call is one run of the pair, appended to its file (retest/A-B.jsonl holds every run
  // of that pair); the run's own lines give its bandwidths.
  std::map<std::string, int> runs_of;
  judge(
      o, tournament,
      [&](const std::string& a, const std::string& b) {
        Retest t;
        t.a = a;
        t.b = b;
        const std::string name = fmt::format("{}-{}", a, b);
        const fs::path jsonl = s.output / "retest" / (name + ".jsonl");
        const auto argv = in.collbench_argv(2, {a, b}, jsonl, "");
        t.command = shell_join(argv);
        const int k = runs_of[name]++;
        const std::string log = k == 0 ? "retest-" + name : fmt::format("retest-{}-r{}", name, k);
        std::error_code ec;
        const auto size = fs::file_size(jsonl, ec);
        const std::uint64_t from = ec ? 0 : size;
        const auto r = in.measure(argv, log);
        if (!r.ok()) {
          t.failure = fmt::format("collbench {}; see logs/{}.out", r.describe(), log);
        } else {
          t.bandwidths = largest_size_bandwidths(jsonl, false, from);
        }
        return t;
      },
      // As many runs as tournaments (--repeats): a retest's ratio is the median of its runs', as
      // a pair's level in the tournament is of its tournaments, so that one run disturbed by
      // something else on its hosts decides no verdict.
      s.repeats);

  const auto bad = confirmed_hosts(o);
  std::string list;
  for (const auto& h : bad) list += h + "\n";
  write_text(s.output / "suspects.txt", list);

  // The report of every step.
  std::vector<std::string> full_report{in.report.string(), s.output.string(), "-o",
                                       (s.output / "report").string(), "-q"};
  full_report.insert(full_report.end(), topology_argv.begin(), topology_argv.end());
  const auto report = run_process({full_report, std::nullopt, std::nullopt, 600});
  if (!report.ok()) {
    o.steps.push_back(fmt::format("the report failed ({}): {}", report.describe(),
                                  std::string(trim(report.err))));
  }
  write_text(s.output / "summary.txt", hunt_summary(o, s.output));
  write_text(status_file, "0\n");
  return 0;
}

// --- submitting -----------------------------------------------------------------------------

// The inner command line: the settings again, for `hunt --inside` in the job.
std::vector<std::string> inner_args(const HuntSettings& s, const fs::path& collbench,
                                    const fs::path& report) {
  // The request's options are spelled in the hunt as in collbench, the tests apart.
  MeasureRequest request = s.request;
  request.tests.clear();
  std::vector<std::string> a = to_argv(request);
  a.insert(a.begin(), {"--nodes", std::to_string(s.nodes), "--tasks-per-node",
                       std::to_string(s.tasks_per_node), "--tests",
                       fmt::format("{}", fmt::join(s.request.tests, ","))});
  a.insert(a.end(), {"--split", fmt::format("{}", fmt::join(s.splits, ",")), "--repeats",
                     std::to_string(s.repeats), "--threshold", fmt::format("{}", s.threshold),
                     "--launcher", s.launcher, "--collbench", collbench.string(),
                     "--collbench-report", report.string(), "-o", s.output.string()});
  if (!s.topology.empty()) a.insert(a.end(), {"--topology", s.topology});
  if (!s.topology_hosts.empty()) a.insert(a.end(), {"--topology-hosts", s.topology_hosts.string()});
  return a;
}

int submit_and_wait(const HuntSettings& s) {
  const fs::path tmpl = hunt_template(s);
  if (!fs::is_regular_file(tmpl)) {
    throw_usage("the hunt's sbatch script {} does not exist; give --template", tmpl.string());
  }
  const fs::path site = site_env_path(s, tmpl);
  if (!site.empty() && ::access(site.c_str(), R_OK) != 0) {
    throw_usage("--site-env {}: {} cannot be read; give a name in slurm/env or a path", s.site_env,
                site.string());
  }
  // A bad tree stops the hunt here, before the job waits in the queue.
  if (s.topology == kSlurmTopology) {
    read_slurm_topology(slurm_topology_text(), "scontrol show topology");
  } else if (!s.topology.empty()) {
    read_topology_file(s.topology, topology_hosts_file(s));
  }
  std::error_code ec;
  if (fs::exists(s.output, ec) &&
      (!fs::is_directory(s.output, ec) || !fs::is_empty(s.output, ec))) {
    throw_usage(
        "-o {}: exists and is not an empty directory; give a new one (collbench appends "
        "to its results, which would mix two hunts)",
        s.output.string());
  }
  fs::create_directories(s.output, ec);
  if (ec) throw_runtime("cannot create {}: {}", s.output.string(), ec.message());

  const auto collbench = beside_program(s, s.collbench, "collbench");
  const auto report = beside_program(s, s.collbench_report, "collbench-report");
  std::vector<std::string> argv{"sbatch", "--parsable", "--nodes=" + std::to_string(s.nodes),
                                "--ntasks-per-node=" + std::to_string(s.tasks_per_node),
                                "--output=" + (s.output / "job.out").string()};
  if (!s.partition.empty()) argv.push_back("--partition=" + s.partition);
  if (!s.time_limit.empty()) argv.push_back("--time=" + s.time_limit);
  argv.push_back(tmpl.string());
  for (auto& a : inner_args(s, collbench, report)) argv.push_back(std::move(a));

  std::error_code self_ec;
  const auto self = fs::read_symlink("/proc/self/exe", self_ec);
  auto env = current_environment();
  std::erase_if(env, [](const std::string& e) {
    return e.starts_with("COLLBENCH_SWEEP=") || e.starts_with("COLLBENCH_SITE_ENV=");
  });
  env.push_back("COLLBENCH_SWEEP=" + (self_ec ? std::string("collbench-sweep") : self.string()));
  if (!site.empty()) env.push_back("COLLBENCH_SITE_ENV=" + site.string());

  const Slurm slurm;
  const std::string id = slurm.submit(argv, env, "the hunt");
  fmt::print(s.out, "submitted the hunt as job {} ({} nodes); results in {}\n", id, s.nodes,
             s.output.string());
  std::fflush(s.out);

  const auto start = std::chrono::steady_clock::now();
  std::string state = "unknown";
  while (true) {
    const auto states = slurm.query({id});
    const auto it = states.find(id);
    if (it == states.end()) break;  // forgotten: ended long ago
    state = it->second.state;
    if (phase_of(state) == JobPhase::kEnded) break;
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (s.timeout_s > 0 && waited > s.timeout_s) {
      throw_runtime(
          "gave up waiting after {:.0f} s; job {} is {} and goes on writing to {} "
          "(scancel {} stops it)",
          waited, id, state, s.output.string(), id);
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(s.interval_s));
  }
  const auto status = read_file(s.output / "exit_status");
  const std::string job_out = (s.output / "job.out").string();
  if (!status || std::string(trim(*status)) != "0") {
    // The last line of the job's output says why, when anything does.
    std::string why;
    if (const auto text = read_file(job_out)) {
      std::istringstream lines(*text);
      for (std::string line; std::getline(lines, line);) {
        if (line.find("collbench-sweep:") != std::string::npos) why = std::string(trim(line));
      }
    }
    throw_runtime("the hunt job {} ended {} without a result{}{}; see {}", id, state,
                  why.empty() ? "" : ": ", why, job_out);
  }
  const auto summary = read_file(s.output / "summary.txt");
  if (!summary)
    throw_runtime("the hunt job {} wrote no {}", id, (s.output / "summary.txt").string());
  std::fputs(summary->c_str(), s.out);
  return 0;
}

}  // namespace

void check_hunt_settings(const HuntSettings& s) {
  if (s.nodes < kMinNodes || s.nodes > kMaxNodes) {
    throw_usage(
        "--nodes {}: the hunt needs {} to {} nodes (collbench-report names a host only against "
        "at least three other pairs); run collbench-sweep hunt --help",
        s.nodes, kMinNodes, kMaxNodes);
  }
  if (s.tasks_per_node < 1 || s.tasks_per_node > 1024) {
    throw_usage("--tasks-per-node {}: give 1 to 1024", s.tasks_per_node);
  }
  if (s.request.tests.empty()) throw_usage("--tests is empty; name at least one collbench test");
  bool pairs = false;
  std::set<std::string> seen;
  for (const auto& split : s.splits) {
    if (!valid_split(split)) {
      throw_usage("--split {}: give pairs, rail, node or sample:K, comma-separated", split);
    }
    if (!seen.insert(split).second) throw_usage("--split names {} twice", split);
    pairs = pairs || pair_split(split);
  }
  if (!pairs) {
    throw_usage(
        "--split {}: the hunt needs pairs or sample:K among the modes (pair evidence names "
        "hosts and links)",
        fmt::join(s.splits, ","));
  }
  if (s.repeats < 1 || s.repeats > kMaxRepeats) {
    throw_usage("--repeats {}: give 1 to {}", s.repeats, kMaxRepeats);
  }
  if (!(s.threshold > 0 && s.threshold < 1)) {
    throw_usage("--threshold {}: give a percentage above 0% and below 100%, such as 25%",
                s.threshold);
  }
  if (s.launcher != "srun" && s.launcher != "mpirun") {
    throw_usage("--launcher {}: give srun or mpirun", s.launcher);
  }
  if (s.output.empty()) throw_usage("-o is empty; give the directory the hunt writes");
  if (!s.topology_hosts.empty() && s.topology.empty()) {
    throw_usage("--topology-hosts names the hosts of an EC2 topology; give --topology FILE too");
  }
}

int run_hunt(const HuntSettings& settings) {
  check_hunt_settings(settings);
  HuntSettings s = settings;
  s.output = fs::absolute(s.output).lexically_normal();
  // The job reads the files from its own working directory.
  if (!s.topology.empty() && s.topology != kSlurmTopology)
    s.topology = fs::absolute(s.topology).lexically_normal().string();
  if (!s.topology_hosts.empty())
    s.topology_hosts = fs::absolute(s.topology_hosts).lexically_normal();
  return s.inside ? run_inside(s) : submit_and_wait(s);
}

SuspectList suspect_list(const SuspectsRecord& record) {
  SuspectList out;
  for (const auto& h : record.hosts) {
    out.hosts.push_back(h.host);
    out.host_ratios.push_back(h.ratio);
  }
  for (const auto& l : record.links) {
    out.links.emplace_back(l.a, l.b);
    out.link_ratios.push_back(l.ratio);
  }
  out.switches = record.switches;
  // The comment lines people read in the summary, as collbench-report prints them.
  std::istringstream lines(suspects_text(record));
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with('#')) out.notes.push_back(line);
  }
  return out;
}

SuspectList parse_suspects(const std::string& json) {
  try {
    return suspect_list(read_suspects_json(json));
  } catch (const RecordError& e) {
    throw_runtime("collbench-report --suspects --json printed no suspects document ({})", e.what());
  }
}

}  // namespace collbench::sweep
