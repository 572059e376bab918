#include "host_probe.h"

#include <ifaddrs.h>
#include <net/if.h>
#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <set>

#include "collbench/doctor/system_facts.h"
#include "collbench/escape_text.h"
#if COLLBENCH_HAVE_CUDA
#include "collbench/cuda_device.h"
#endif
#include "collbench/reporter.h"
#include "fabric_probe.h"
#include "library_probe.h"
#include "nvml_probe.h"

extern char** environ;

namespace collbench::doctor {
namespace {

/// Names of the interfaces that are up (NCCL_SOCKET_IFNAME is matched against them).
std::vector<std::string> up_interfaces() {
  std::set<std::string> names;
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return {};
  for (const ifaddrs* a = list; a; a = a->ifa_next) {
    if (a->ifa_name && (a->ifa_flags & IFF_UP)) names.insert(a->ifa_name);
  }
  freeifaddrs(list);
  return {names.begin(), names.end()};
}

const char* env_or_null(const char* name) { return std::getenv(name); }

}  // namespace

std::map<std::string, std::string> doctor_environment(const char* const* envp) {
  static const std::vector<std::string> kPrefixes{"NCCL_", "FI_", "OFI_NCCL_"};
  static const std::set<std::string> kNames{"CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES",
                                            "LD_LIBRARY_PATH", "LD_PRELOAD"};
  std::map<std::string, std::string> out;
  for (; envp && *envp; ++envp) {
    const std::string entry = redact_secret(*envp);
    const auto eq = entry.find('=');
    if (eq == std::string::npos) continue;
    const std::string name = entry.substr(0, eq);
    bool wanted = kNames.count(name) > 0;
    for (const auto& prefix : kPrefixes) wanted = wanted || name.rfind(prefix, 0) == 0;
    if (wanted) out[name] = entry.substr(eq + 1);
  }
  return out;
}

HostFacts probe_host(const ProbeOptions& options, const std::string& host) {
  HostFacts facts = read_system_facts(this_process_paths(options.sysfs_root));
  facts.host = host;

  std::string why_not;
  if (const auto nvml = probe_nvml(why_not)) {
    merge_nvml(facts.gpus, *nvml);
    if (!nvml->driver_version.empty()) facts.driver_version = nvml->driver_version;
  }
  facts.libraries = {probe_nccl(),         probe_cuda_driver(),
                     probe_nvml_library(), probe_libfabric(),
                     probe_loaded_mpi(),   probe_net_plugin(env_or_null("NCCL_NET_PLUGIN"))};
  // The cluster's own libfabric and MPI, where it has them, against those collbench loaded.
  for (auto& library : facts.libraries) note_cluster_copy(library, options.sysfs_root);
#if COLLBENCH_HAVE_CUDA
  // The CUDA runtime is linked into collbench: its version is the one every run of this build
  // uses, whatever the host has installed.
  facts.libraries.push_back(LibraryFact{
      "cuda_runtime", true, "", cuda_runtime_version(), {{"linked", "statically into collbench"}}});
#endif
  std::string why_no_fabric;
  facts.fabric = probe_fabric(why_no_fabric);
  if (!facts.fabric && !why_no_fabric.empty()) {
    for (auto& library : facts.libraries) {
      if (library.name == "libfabric") library.details["fi_getinfo"] = why_no_fabric;
    }
  }
  facts.interfaces = up_interfaces();
  facts.env = doctor_environment(environ);
  // Files, the environment and libraries may hold any bytes: escaped here, once, so that every
  // table and JSON document can show them, and named for a finding.
  facts.not_utf8 = escape_invalid_text(facts);
  return facts;
}

RankFact probe_rank(const ProbeOptions& options, int rank, int local_rank) {
  RankFact fact;
  fact.rank = rank;
  fact.local_rank = local_rank;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &set)) fact.cpus.push_back(cpu);
    }
  }
  fact.numa_nodes = numa_nodes_of(options.sysfs_root, fact.cpus);
  return fact;
}

}  // namespace collbench::doctor
