#include "collbench/context.h"

#include <unistd.h>

#include <chrono>
#include <fstream>
#include <random>
#include <set>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "collbench/result.h"
#include "collbench/types.h"

extern char** environ;

namespace collbench {
namespace {

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  while (!line.empty() && (line.back() == ' ' || line.back() == '\n' || line.back() == '\r')) line.pop_back();
  return line;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(colon + 2);
    }
  }
  return "";
}

nlohmann::json device_json(const DeviceInfo& d) {
  nlohmann::json j{{"model", d.model}, {"index", d.index}, {"memory_bytes", d.memory_bytes}};
  if (!d.driver_version.empty()) j["driver_version"] = d.driver_version;
  if (!d.runtime_version.empty()) j["runtime_version"] = d.runtime_version;
  if (!d.pci_bus_id.empty()) j["pci_bus_id"] = d.pci_bus_id;
  return j;
}

nlohmann::json options_json(const Options& o) {
  nlohmann::json dtypes = nlohmann::json::array();
  for (auto t : o.dtypes) dtypes.push_back(name(t));
  nlohmann::json ops = nlohmann::json::array();
  for (auto op : o.ops) ops.push_back(name(op));
  return {{"tests", o.tests},
          {"min_bytes", o.min_bytes},
          {"max_bytes", o.max_bytes},
          {"step_factor", o.step_factor},
          {"step_bytes", o.step_bytes},
          {"iters", o.iters},
          {"warmup", o.warmup},
          {"check", o.check},
          {"dtypes", dtypes},
          {"ops", ops},
          {"root", o.root},
          {"mode", measurement_mode(o)},
          {"aggregate", name(o.aggregate)},
          {"graph_launches", o.graph_launches},
          {"register_buffers", o.register_buffers},
          {"timeout_s", o.timeout_s},
          {"pairs", name(o.pairs)},
          {"window", o.window},
          {"seed", o.seed},
          {"require_net", o.require_net}};
}

}  // namespace

std::map<std::string, std::string> recorded_environment(const char* const* envp) {
  // Variables the launcher sets for its own wiring (not configuration a person chose).
  static const std::vector<std::string> kLauncherInternal{
      "OMPI_MCA_orte_", "OMPI_MCA_ess", "OMPI_MCA_pmix", "OMPI_MCA_initial_wdir",
      "OMPI_MCA_shmem_RUNTIME_QUERY_hint", "SLURM_TASK_PID", "SLURM_PROCID", "SLURM_LOCALID",
      "SLURM_GTIDS", "SLURM_STEP_"};
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

std::string instance_type() {
  // EC2 (and most clouds) expose the instance type as the DMI product name.
  return read_first_line("/sys/devices/virtual/dmi/id/product_name");
}

std::string collbench_version() { return COLLBENCH_VERSION_STRING; }

std::string make_run_id() {
  std::random_device device;
  std::mt19937_64 engine((static_cast<std::uint64_t>(device()) << 32) ^ device() ^
                         static_cast<std::uint64_t>(
                             std::chrono::steady_clock::now().time_since_epoch().count()));
  return fmt::format("{:016x}", engine());
}

nlohmann::json build_context(const Options& options, Bootstrap& bootstrap, Backend& backend,
                             const std::string& run_id) {
  // Every rank describes itself; rank 0 assembles.
  const auto env = recorded_environment(environ);
  const nlohmann::json self{{"host", bootstrap.hostname()},
                            {"local_rank", bootstrap.local_rank()},
                            {"device", device_json(backend.device().info())},
                            {"env", env},
                            {"instance_type", instance_type()},
                            {"cpu", cpu_model()},
                            {"pid", static_cast<long>(getpid())}};
  const auto all = bootstrap.gather(self.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), 0);
  if (bootstrap.rank() != 0) return {};

  const BackendInfo& info = backend.info();
  nlohmann::json c;
  c["schema"] = schema_tag();
  c["record"] = "context";
  c["run_id"] = run_id;
  c["collbench_version"] = collbench_version();
  c["start_time"] = fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", fmt::gmtime(std::time(nullptr)));
  c["command_line"] = options.argv;
  c["options"] = options_json(options);

  nlohmann::json facts = nlohmann::json::object();
  nlohmann::json network = nlohmann::json::object();
  // The bootstrap's runtime is the MPI library when launched by mpirun/srun (also for the NCCL
  // backend, whose MPI only bootstraps).
  const std::string runtime = bootstrap.runtime_version();
  nlohmann::json libraries = nlohmann::json::object();
  libraries[runtime.find("MPI") != std::string::npos ? "mpi" : "bootstrap"] = runtime;
  libraries[info.name] = info.library;
  // Facts are namespaced: "library.X" and "network.X" get their own sections.
  for (const auto& [key, value] : info.facts) {
    if (key.rfind("library.", 0) == 0) libraries[key.substr(8)] = value;
    else if (key.rfind("network.", 0) == 0) network[key.substr(8)] = value;
    else facts[key] = value;
  }
  c["backend"] = {{"name", info.name},
                  {"library", info.library},
                  {"memory", name(info.memory)},
                  {"stream_ordered", info.stream_ordered},
                  {"facts", facts}};
  c["libraries"] = libraries;
  if (!network.empty()) c["network"] = network;

  c["nranks"] = bootstrap.size();
  c["nodes"] = bootstrap.node_count();
  nlohmann::json ranks = nlohmann::json::array();
  std::vector<std::string> host_order;
  std::map<std::string, nlohmann::json> hosts;
  std::vector<nlohmann::json> parsed;
  for (int r = 0; r < static_cast<int>(all.size()); ++r) {
    parsed.push_back(nlohmann::json::parse(all[r]));
    const auto& p = parsed.back();
    const std::string host = p["host"];
    ranks.push_back({{"rank", r},
                     {"host", host},
                     {"local_rank", p["local_rank"]},
                     {"pid", p["pid"]},
                     {"device", p["device"]}});
    if (!hosts.count(host)) {
      host_order.push_back(host);
      hosts[host] = {{"name", host},
                     {"ranks", nlohmann::json::array()},
                     {"instance_type", p["instance_type"]},
                     {"cpu", p["cpu"]}};
    }
    hosts[host]["ranks"].push_back(r);
  }
  c["ranks"] = ranks;
  c["hosts"] = nlohmann::json::array();
  for (const auto& h : host_order) c["hosts"].push_back(hosts[h]);

  // Rank 0's environment, plus whatever differs on other ranks (a classic cause of "why is this
  // node slow": one host with a different NCCL_/FI_ setting).
  c["env"] = parsed.front()["env"];
  nlohmann::json differences = nlohmann::json::object();
  const auto& base = parsed.front()["env"];
  for (std::size_t r = 1; r < parsed.size(); ++r) {
    nlohmann::json diff = nlohmann::json::object();
    const auto& e = parsed[r]["env"];
    std::set<std::string> keys;
    for (const auto& [k, v] : base.items()) keys.insert(k);
    for (const auto& [k, v] : e.items()) keys.insert(k);
    for (const auto& k : keys) {
      // Per-rank variables (ranks, local ids) naturally differ; they are not a configuration.
      if (k.rfind("SLURM_", 0) == 0 || k.rfind("OMPI_", 0) == 0 || k == "COLLBENCH_DEVICE") continue;
      const auto a = base.contains(k) ? base[k] : nlohmann::json(nullptr);
      const auto b = e.contains(k) ? e[k] : nlohmann::json(nullptr);
      if (a != b) diff[k] = b;
    }
    if (!diff.empty()) differences[std::to_string(r)] = diff;
  }
  if (!differences.empty()) c["env_differences"] = differences;

  if (env.count("SLURM_JOB_ID")) {
    auto get = [&](const char* key) { return env.count(key) ? env.at(key) : std::string(); };
    c["slurm"] = {{"job_id", get("SLURM_JOB_ID")},
                  {"nodelist", get("SLURM_JOB_NODELIST")},
                  {"partition", get("SLURM_JOB_PARTITION")},
                  {"ntasks", get("SLURM_NTASKS")}};
  }
  return c;
}

}  // namespace collbench
