#include "collbench/sweep/launch.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sched.h>

#include <algorithm>
#include <fstream>
#include <set>

#include "collbench/error.h"
#include "collbench/sweep/placement.h"

namespace collbench::sweep {
namespace {

std::string read_word(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string w;
  in >> w;
  return w;
}

// The array's task indices: the repeats of its runs, "0,1,2".
std::string array_indices(const std::vector<const RunSpec*>& runs) {
  std::vector<int> repeats;
  for (const auto* r : runs) repeats.push_back(r->repeat);
  return fmt::format("{}", fmt::join(repeats, ","));
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t pos = 0; (pos = s.find(from, pos)) != std::string::npos; pos += to.size()) {
    s.replace(pos, from.size(), to);
  }
  return s;
}

}  // namespace

std::string Command::display() const {
  // `env -u NAME` for unset variables (they must come before the assignments).
  std::string unsets, sets;
  for (const auto& e : env) {
    if (e.value)
      sets += fmt::format("{}={} ", e.name, shell_quote(*e.value));
    else
      unsets += fmt::format("-u {} ", e.name);
  }
  return (unsets.empty() ? "" : "env " + unsets) + sets + shell_join(argv);
}

std::filesystem::path resolve_site_env(const Partition& partition, const Campaign& campaign,
                                       const Tools& tools) {
  const std::string& s = partition.site_env;
  if (s.empty()) return {};
  std::filesystem::path p;
  if (s.find('/') != std::string::npos || (s.size() > 3 && s.ends_with(".sh"))) {
    p = campaign.beside(s);
  } else {
    p = tools.sbatch_template.parent_path() / "env" / (s + ".sh");
  }
  return std::filesystem::absolute(p).lexically_normal();
}

JobPaths Submission::paths(std::size_t i, const std::string& job_id) const {
  auto expand = [&](std::string pattern) {
    if (array) {
      const auto underscore = job_id.find('_');
      pattern = replace_all(pattern, "%A", job_id.substr(0, underscore));
      pattern = replace_all(pattern, "%a", std::to_string(runs.at(i)->repeat));
      return pattern;
    }
    return expand_job_pattern(pattern, job_id);
  };
  return JobPaths{expand(output_pattern), expand(jsonl_pattern)};
}

std::string Submission::job_id_of(std::size_t i, const std::string& submitted_id) const {
  if (!array) return submitted_id;
  return fmt::format("{}_{}", submitted_id, runs.at(i)->repeat);
}

Submission sbatch_submission(const Campaign& campaign, const std::vector<const RunSpec*>& runs,
                             const CampaignPaths& paths, const Tools& tools, bool array) {
  if (runs.empty()) throw_runtime("internal error: a submission without runs");
  const RunSpec& run = *runs.front();
  Submission s;
  s.runs = runs;
  s.array = array;
  std::string job_name = campaign.name + "." + run.name;
  std::string env_file = paths.env_file(run.name).string();
  if (array) {
    // The repeat is the array task index, so every per-run path takes it from %a.
    const std::string base = base_name(run);
    const auto dir = paths.root / "runs" / (base + "-r%a");
    s.output_pattern = (dir / "slurm-%A_%a.out").string();
    s.jsonl_pattern = (dir / "job-%A_%a" / "collbench.jsonl.raw").string();
    env_file = (dir / "env").string();
    job_name = campaign.name + "." + base;
  } else {
    s.output_pattern = paths.slurm_output_pattern(run.name).string();
    s.jsonl_pattern = paths.job_jsonl_pattern(run.name).string();
  }

  auto& a = s.command.argv;
  a = {"sbatch", "--parsable", "--job-name=" + job_name, fmt::format("--nodes={}", run.nodes),
       fmt::format("--ntasks-per-node={}", run.tasks_per_node)};
  if (campaign.request_gpus) a.push_back(fmt::format("--gpus-per-node={}", run.tasks_per_node));
  if (!run.partition.empty()) a.push_back("--partition=" + run.partition);
  if (!campaign.time_limit.empty()) a.push_back("--time=" + campaign.time_limit);
  if (array) a.push_back("--array=" + array_indices(runs));
  a.push_back("--output=" + s.output_pattern);
  // The submitter's environment (PATH, modules, SLURM_CONF, ...) plus the settings below.
  a.push_back("--export=ALL");
  // Before the campaign's own sbatch_args, so that a user's --switches or --nodelist there wins.
  for (auto& arg : placement_sbatch_args(campaign, run)) a.push_back(std::move(arg));
  a.insert(a.end(), run.sbatch_args.begin(), run.sbatch_args.end());
  a.push_back(tools.sbatch_template.string());
  a.insert(a.end(), run.collbench_args.begin(), run.collbench_args.end());

  const Partition* partition = nullptr;
  for (const auto& p : campaign.partitions) {
    if (p.name == run.partition) partition = &p;
  }
  const auto site_env =
      partition ? resolve_site_env(*partition, campaign, tools) : std::filesystem::path();
  // Every setting is given, empty when unused, so that a value left in the submitter's shell
  // cannot change a campaign's runs.
  s.command.env = {
      {"COLLBENCH_BIN", tools.collbench.string()},
      {"COLLBENCH_ENV_FILE", env_file},
      {"COLLBENCH_JSONL", s.jsonl_pattern},
      {"COLLBENCH_SITE_ENV", site_env.string()},
      {"COLLBENCH_LAUNCHER", campaign.launcher},
      {"COLLBENCH_TASKS_PER_NODE", std::to_string(run.tasks_per_node)},
      {"COLLBENCH_CONTAINER_IMAGE", campaign.container_image},
      {"COLLBENCH_CONTAINER_MOUNTS", campaign.container_mounts},
      {"COLLBENCH_DOCTOR", std::string(doctor_mode_name(campaign.doctor))},
  };
  return s;
}

Command mpirun_command(const RunSpec& run, const Tools& tools, const std::filesystem::path& jsonl,
                       int cores) {
  Command c;
  c.argv = {tools.mpirun, "-np", std::to_string(run.ranks())};
  // Open MPI gives a host as many slots as it has cores and refuses more ranks without this.
  if (run.ranks() > cores) c.argv.push_back("--oversubscribe");
  c.argv.push_back(tools.collbench.string());
  c.argv.insert(c.argv.end(), run.collbench_args.begin(), run.collbench_args.end());
  c.argv.insert(c.argv.end(), {"--jsonl", jsonl.string()});
  c.env = run.env;
  return c;
}

Command doctor_command(DoctorMode mode, const RunSpec& run, const Tools& tools,
                       const std::filesystem::path& report) {
  Command c;
  c.argv = {tools.collbench.string(), "doctor", "--json-file", report.string()};
  if (mode == DoctorMode::kStrict) c.argv.push_back("--strict");
  c.env = run.env;
  return c;
}

RunDefinition run_definition(const Campaign& campaign, const RunSpec& run, Where where) {
  RunDefinition d;
  d.collbench_args = run.collbench_args;
  for (const auto& e : run.env) d.env.push_back({e.name, e.value});
  d.nodes = run.nodes;
  d.tasks_per_node = run.tasks_per_node;
  if (where == Where::kSlurm) {
    d.partition = run.partition;
    d.sbatch_args = run.sbatch_args;
    d.launcher = campaign.launcher;
    d.site_env = run.site_env;
    d.container_image = campaign.container_image;
    // What was asked, not the hosts picked for it: those follow the cluster as it is.
    if (run.placement != NodePlacement::kAny) d.placement = placement_name(run.placement);
  }
  // Whether a failed doctor stops the run decides which runs measure at all.
  if (campaign.doctor != DoctorMode::kOff) d.doctor = doctor_mode_name(campaign.doctor);
  return d;
}

std::string describe_change(const RunDefinition& recorded, const RunDefinition& now) {
  std::vector<std::string> changes;
  auto words = [](const std::vector<std::string>& v) { return fmt::format("`{}`", shell_join(v)); };
  auto env_words = [](const std::vector<EnvEntry>& env) {
    std::vector<std::string> out;
    for (const auto& e : env)
      out.push_back(e.value ? fmt::format("{}={}", e.name, shell_quote(*e.value))
                            : "unset " + e.name);
    return out.empty() ? std::string("(none)") : fmt::format("`{}`", fmt::join(out, " "));
  };
  auto add = [&](std::string_view what, const std::string& was, const std::string& is) {
    if (was != is) changes.push_back(fmt::format("{} {} -> {}", what, was, is));
  };
  auto quoted = [](const std::string& s) { return s.empty() ? std::string("(none)") : s; };
  add("collbench arguments", words(recorded.collbench_args), words(now.collbench_args));
  add("environment", env_words(recorded.env), env_words(now.env));
  add("nodes", std::to_string(recorded.nodes), std::to_string(now.nodes));
  add("tasks per node", std::to_string(recorded.tasks_per_node),
      std::to_string(now.tasks_per_node));
  add("partition", quoted(recorded.partition), quoted(now.partition));
  add("sbatch arguments", words(recorded.sbatch_args), words(now.sbatch_args));
  add("launcher", quoted(recorded.launcher), quoted(now.launcher));
  add("site_env", quoted(recorded.site_env), quoted(now.site_env));
  add("container_image", quoted(recorded.container_image), quoted(now.container_image));
  add("doctor", recorded.doctor.empty() ? "off" : recorded.doctor,
      now.doctor.empty() ? "off" : now.doctor);
  add("placement", recorded.placement.empty() ? "any" : recorded.placement,
      now.placement.empty() ? "any" : now.placement);
  return fmt::format("{}", fmt::join(changes, "; "));
}

int usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  std::set<std::string> cores;
  int cpus = 0;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &set)) continue;
    ++cpus;
    const auto topo =
        std::filesystem::path("/sys/devices/system/cpu") / fmt::format("cpu{}", cpu) / "topology";
    const std::string package = read_word(topo / "physical_package_id");
    const std::string core = read_word(topo / "core_id");
    cores.insert(core.empty() ? fmt::format("cpu{}", cpu) : package + ":" + core);
  }
  return std::max(1, static_cast<int>(cores.empty() ? cpus : cores.size()));
}

}  // namespace collbench::sweep
