#include "collbench/context_builder.h"

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iterator>
#include <random>
#include <set>

#include "collbench/system.h"
#include "collbench/types.h"

extern char** environ;

namespace collbench {
namespace {

/// What each rank says about itself; rank 0 assembles the context from every rank's.
struct RankFacts {
  std::string host;
  int local_rank = 0;
  DeviceRecord device;
  std::map<std::string, std::string> env;
  std::string instance_type;
  std::string instance_id;
  std::string cpu;
  std::int64_t pid = 0;

  static constexpr auto fields() {
    return std::tuple{Field{"host", &RankFacts::host},
                      Field{"local_rank", &RankFacts::local_rank},
                      Field{"device", &RankFacts::device},
                      Field{"env", &RankFacts::env},
                      Field{"instance_type", &RankFacts::instance_type},
                      Field{"instance_id", &RankFacts::instance_id},
                      Field{"cpu", &RankFacts::cpu},
                      Field{"pid", &RankFacts::pid}};
  }
};

}  // namespace

ResolvedRequest resolve_request(const Options& o, const BackendArgs& backend_args) {
  ResolvedRequest r;
  r.tests = o.tests;
  r.min_bytes = o.min_bytes;
  r.max_bytes = o.max_bytes;
  r.step_factor = o.step_factor;
  r.step_bytes = o.step_bytes;
  r.iters = o.iters;
  r.warmup = o.warmup;
  r.check = o.check;
  r.dtypes = o.dtypes;
  r.ops = o.ops;
  r.root = o.root;
  r.mode = measurement_mode(o);
  r.aggregate = o.aggregate;
  r.graph_launches = o.graph_launches;
  r.timeout_s = o.timeout_s;
  r.pairs = o.pairs;
  r.buffers = o.buffers;
  r.window = o.window;
  r.seed = o.seed();
  r.precision = o.precision;
  if (o.precision) r.max_time_s = o.max_time_s;
  if (o.split) r.split = o.split_text;
  if (o.ranks_per_process() > 1) {
    r.threads_per_process = o.threads_per_process;
    r.gpus_per_thread = o.gpus_per_thread;
  }
  r.backend = backend_args.values();
  if (o.request != MeasureRequest{}) r.request = o.request;
  return r;
}

namespace {

/// Rank 0's environment differences on every other rank (a classic cause of "why is this node
/// slow": one host with a different NCCL_ or FI_ setting).
std::map<std::string, EnvDifferences> env_differences(const std::vector<RankFacts>& ranks) {
  std::map<std::string, EnvDifferences> out;
  const auto& base = ranks.front().env;
  for (std::size_t r = 1; r < ranks.size(); ++r) {
    const auto& env = ranks[r].env;
    std::set<std::string> keys;
    for (const auto& [k, v] : base) keys.insert(k);
    for (const auto& [k, v] : env) keys.insert(k);
    EnvDifferences diff;
    for (const auto& k : keys) {
      // Per-rank variables (ranks, local ids) naturally differ; they are not a configuration.
      if (k.rfind("SLURM_", 0) == 0 || k.rfind("OMPI_", 0) == 0 || k == "COLLBENCH_DEVICE")
        continue;
      const auto a = base.find(k);
      const auto b = env.find(k);
      const std::optional<std::string> mine =
          a == base.end() ? std::nullopt : std::optional(a->second);
      const std::optional<std::string> theirs =
          b == env.end() ? std::nullopt : std::optional(b->second);
      if (mine != theirs) diff[k] = theirs;
    }
    if (!diff.empty()) out[std::to_string(r)] = std::move(diff);
  }
  return out;
}

}  // namespace

std::map<std::string, std::string> recorded_environment(const char* const* envp) {
  // Variables the launcher sets for its own wiring (not configuration a person chose).
  static const std::vector<std::string> kLauncherInternal{"OMPI_MCA_orte_",
                                                          "OMPI_MCA_ess",
                                                          "OMPI_MCA_pmix",
                                                          "OMPI_MCA_initial_wdir",
                                                          "OMPI_MCA_shmem_RUNTIME_QUERY_hint",
                                                          "SLURM_TASK_PID",
                                                          "SLURM_PROCID",
                                                          "SLURM_LOCALID",
                                                          "SLURM_GTIDS",
                                                          "SLURM_STEP_"};
  std::map<std::string, std::string> out;
  for (; envp && *envp; ++envp) {
    const std::string entry(*envp);
    const auto eq = entry.find('=');
    if (eq == std::string::npos) continue;
    const std::string key = entry.substr(0, eq);
    bool internal = false;
    for (const auto& prefix : kLauncherInternal) internal = internal || key.rfind(prefix, 0) == 0;
    if (internal) continue;
    for (const auto& prefix : recorded_env_prefixes()) {
      if (key.rfind(prefix, 0) == 0) {
        out[key] = entry.substr(eq + 1);
        break;
      }
    }
  }
  return out;
}

std::string make_run_id() {
  std::random_device device;
  std::mt19937_64 engine(
      (static_cast<std::uint64_t>(device()) << 32) ^ device() ^
      static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
  return fmt::format("{:016x}", engine());
}

RunContext build_context(const Options& options, const BackendArgs& backend_args,
                         Bootstrap& bootstrap, Backend& backend, const std::string& run_id) {
  RankFacts self;
  self.host = bootstrap.hostname();
  self.local_rank = bootstrap.local_rank();
  self.device = backend.device().info();
  self.env = recorded_environment(environ);
  self.instance_type = instance_type();
  self.instance_id = instance_id();
  self.cpu = cpu_model();
  self.pid = static_cast<std::int64_t>(getpid());
  const auto all = gather(bootstrap, self, 0, "run context");
  if (bootstrap.rank() != 0) return {};

  const BackendInfo& info = backend.info();
  RunContext c;
  c.run_id = run_id;
  c.collbench_version = collbench_version();
  c.start_time = fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::time(nullptr)));
  c.command_line = options.argv;
  c.options = resolve_request(options, backend_args);
  c.labels = request_labels(options.request);
  c.backend = {info.name, info.library, info.memory, info.stream_ordered, info.facts};
  // The bootstrap's runtime is the MPI library when launched by mpirun/srun (also for the NCCL
  // backend, whose MPI only bootstraps).
  const std::string runtime = bootstrap.runtime_version();
  c.libraries[runtime.find("MPI") != std::string::npos ? "mpi" : "bootstrap"] = runtime;
  c.libraries[info.name] = info.library;
  for (const auto& [library, version] : info.libraries) c.libraries[library] = version;
  c.network = info.network;
  c.settings = info.settings;
  c.nranks = bootstrap.size();
  c.nodes = info.nodes.value_or(bootstrap.node_count());

  for (int r = 0; r < static_cast<int>(all.size()); ++r) {
    const RankFacts& p = all[static_cast<std::size_t>(r)];
    c.ranks.push_back({r, p.host, p.local_rank, p.pid, p.device});
    auto host = std::find_if(c.hosts.begin(), c.hosts.end(),
                             [&](const HostRecord& h) { return h.name == p.host; });
    if (host == c.hosts.end()) {
      c.hosts.push_back({p.host, {}, p.instance_type, p.cpu, p.instance_id});
      host = std::prev(c.hosts.end());
    }
    host->ranks.push_back(r);
  }
  c.env = all.front().env;
  c.env_differences = env_differences(all);

  const auto& env = all.front().env;
  if (env.count("SLURM_JOB_ID")) {
    auto get = [&](const char* key) { return env.count(key) ? env.at(key) : std::string(); };
    c.slurm = SlurmRecord{get("SLURM_JOB_ID"), get("SLURM_JOB_NODELIST"),
                          get("SLURM_JOB_PARTITION"), get("SLURM_NTASKS")};
  }
  return c;
}

}  // namespace collbench
