#include "collbench/sweep/slurm.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <span>
#include <sstream>

#include "collbench/error.h"
#include "collbench/sweep/process.h"
#include "collbench/text.h"
#include "collbench/topology.h"
#include "lists.h"

namespace collbench::sweep {
namespace {

// Slurm commands retry an unreachable controller for a while; bound each call anyway.
constexpr double kCommandTimeoutS = 120;

std::string one_line(std::string_view text) {
  std::string s(trim(text));
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

void require(const std::string& program, const std::string& purpose) {
  if (!find_program(program)) {
    throw_runtime(
        "{} not found on PATH, so {}; run on a Slurm login node (or load the Slurm "
        "module), or use `collbench-sweep run --local` without Slurm",
        program, purpose);
  }
}

}  // namespace

JobPhase phase_of(const std::string& state) {
  static const std::vector<std::string> kWaiting{"PENDING",     "REQUEUED",      "REQUEUE_HOLD",
                                                 "REQUEUE_FED", "RESV_DEL_HOLD", "SUSPENDED",
                                                 "CONFIGURING", "RESIZING"};
  static const std::vector<std::string> kRunning{"RUNNING", "COMPLETING", "STAGE_OUT", "SIGNALING",
                                                 "STOPPED"};
  if (contains(kWaiting, state)) return JobPhase::kWaiting;
  if (contains(kRunning, state)) return JobPhase::kRunning;
  return JobPhase::kEnded;
}

std::string Slurm::submit(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                          const std::string& what) const {
  require(argv.at(0), fmt::format("{} cannot be submitted", what));
  ProcessSpec spec{argv, env, std::nullopt, kCommandTimeoutS};
  const auto r = run_process(spec);
  if (!r.ok()) {
    const std::string why = one_line(r.err.empty() ? r.out : r.err);
    throw_runtime("sbatch rejected {} ({}): {}", what, r.describe(),
                  why.empty() ? "no message" : why);
  }
  // --parsable prints "jobid" or "jobid;cluster".
  const std::string id(trim(std::string_view(r.out).substr(0, r.out.find_first_of(";\n"))));
  const bool numeric = !id.empty() && std::all_of(id.begin(), id.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) || c == '_';
  });
  if (!numeric) {
    throw_runtime(
        "sbatch accepted {} but printed no job id (stdout: '{}'); check the sbatch on PATH", what,
        one_line(r.out));
  }
  return id;
}

std::map<std::string, JobState> Slurm::query(const std::vector<std::string>& ids) const {
  std::map<std::string, JobState> out;
  if (ids.empty()) return out;
  require("squeue", "job states cannot be read");
  constexpr std::size_t kChunk = 200;
  for (std::size_t begin = 0; begin < ids.size(); begin += kChunk) {
    const auto chunk = std::span(ids).subspan(begin, std::min(kChunk, ids.size() - begin));
    const std::string list = fmt::format("{}", fmt::join(chunk, ","));
    // -t all keeps jobs that ended but are still in the controller's memory (MinJobAge).
    // -r: one line per array task (pending tasks are otherwise folded into "id_[0-3]").
    const auto r =
        run_process({{"squeue", "-h", "-r", "-t", "all", "-j", list, "-o", "%i|%T|%M|%N|%r"},
                     std::nullopt,
                     std::nullopt,
                     kCommandTimeoutS});
    if (!r.ok()) {
      // squeue fails when none of the ids is known any more: that is an answer, not an error.
      if (r.err.find("Invalid job id") != std::string::npos) continue;
      throw_runtime("squeue failed ({}): {}", r.describe(), one_line(r.err));
    }
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
      const auto f = split(line, '|');
      if (f.size() < 5) continue;
      out[f[0]] = JobState{f[0], f[1], f[2], f[3], f[4], std::nullopt};
    }
  }
  // Jobs the controller forgot: ask accounting, when the cluster keeps it.
  std::vector<std::string> missing;
  for (const auto& id : ids) {
    if (!out.count(id)) missing.push_back(id);
  }
  if (!missing.empty() && find_program("sacct")) {
    const std::string list = fmt::format("{}", fmt::join(missing, ","));
    const auto r = run_process(
        {{"sacct", "-X", "-n", "-P", "-j", list, "-o", "JobID,State,ExitCode,Elapsed,NodeList"},
         std::nullopt,
         std::nullopt,
         kCommandTimeoutS});
    if (r.ok()) {
      std::istringstream lines(r.out);
      for (std::string line; std::getline(lines, line);) {
        const auto f = split(line, '|');
        if (f.size() < 5) continue;
        JobState s{f[0], f[1].substr(0, f[1].find(' ')), f[3], f[4], "", std::nullopt};
        int code = 0;
        const std::string& ec = f[2];
        const auto colon = ec.find(':');
        if (std::from_chars(ec.data(), ec.data() + (colon == std::string::npos ? ec.size() : colon),
                            code)
                .ec == std::errc()) {
          s.exit_code = code;
        }
        out[s.id] = s;
      }
    }
  }
  return out;
}

namespace {

// The hosts of a partition's Nodes= hostlist; none for "(null)" or a list that cannot be read
// (the hosts only matter to placement: across, which then says it has none to draw from).
std::vector<std::string> hosts_of_nodes_field(const std::string& nodes) {
  if (nodes.empty() || nodes == "(null)") return {};
  try {
    return expand_hostlist(nodes, "scontrol show partition: Nodes");
  } catch (const Error&) {
    return {};
  }
}

}  // namespace

std::optional<PartitionLimits> parse_partition_limits(const std::string& text,
                                                      const std::string& name) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::map<std::string, std::string> fields;
    std::istringstream words(line);
    for (std::string w; words >> w;) {
      const auto eq = w.find('=');
      if (eq != std::string::npos) fields[w.substr(0, eq)] = w.substr(eq + 1);
    }
    if (!fields.count("PartitionName")) continue;
    const bool wanted = name.empty() ? fields["Default"] == "YES" : fields["PartitionName"] == name;
    if (!wanted) continue;
    PartitionLimits limits;
    limits.name = fields["PartitionName"];
    int total = 0;
    const auto& t = fields["TotalNodes"];
    if (std::from_chars(t.data(), t.data() + t.size(), total).ec != std::errc())
      return std::nullopt;
    limits.total_nodes = total;
    const auto& m = fields["MaxNodes"];
    int max = 0;
    if (!m.empty() && m != "UNLIMITED" &&
        std::from_chars(m.data(), m.data() + m.size(), max).ec == std::errc()) {
      limits.max_nodes = max;
    }
    limits.hosts = hosts_of_nodes_field(fields["Nodes"]);
    return limits;
  }
  return std::nullopt;
}

std::optional<PartitionLimits> Slurm::partition(const std::string& name) const {
  if (!find_program("scontrol")) return std::nullopt;
  std::vector<std::string> argv{"scontrol", "show", "partition"};
  if (!name.empty()) argv.push_back(name);
  argv.push_back("-o");
  const auto r = run_process({argv, std::nullopt, std::nullopt, 30});
  if (!r.ok()) {
    // "Partition gpu not found" (on stdout in Slurm 22.05).
    if (!name.empty() && (r.out + r.err).find("not found") != std::string::npos) {
      PartitionLimits unknown;
      unknown.name = name;
      unknown.exists = false;
      return unknown;
    }
    return std::nullopt;
  }
  return parse_partition_limits(r.out, name);
}

std::string Slurm::topology() const {
  require("scontrol", "the network's tree (topology: slurm) cannot be read");
  const auto r = run_process({{"scontrol", "show", "topology"}, std::nullopt, std::nullopt, 30});
  if (!r.ok()) {
    throw_runtime(
        "scontrol show topology failed ({}): {}; the cluster needs TopologyPlugin=topology/tree "
        "(or give the campaign topology: FILE)",
        r.describe(), one_line(r.err.empty() ? r.out : r.err));
  }
  return r.out;
}

void Slurm::cancel(const std::vector<std::string>& ids) const {
  if (ids.empty()) return;
  require("scancel", "jobs cannot be cancelled");
  std::vector<std::string> argv{"scancel"};
  argv.insert(argv.end(), ids.begin(), ids.end());
  run_process({argv, std::nullopt, std::nullopt, kCommandTimeoutS});
}

}  // namespace collbench::sweep
