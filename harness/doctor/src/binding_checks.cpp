#include "collbench/doctor/binding_checks.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

namespace collbench::doctor {
namespace {

constexpr std::string_view kBindingSource = "https://www.open-mpi.org/doc/v4.1/man1/mpirun.1.php";

/// "0-3,8" for a sorted list of CPUs.
std::string cpu_list(const std::vector<int>& cpus) {
  std::vector<std::string> ranges;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    ranges.push_back(j == i ? fmt::format("{}", cpus[i]) : fmt::format("{}-{}", cpus[i], cpus[j]));
    i = j + 1;
  }
  return fmt::format("{}", fmt::join(ranges, ","));
}

std::string rank_list(const std::vector<int>& ranks) {
  return fmt::format("{}", fmt::join(ranks, ", "));
}

}  // namespace

std::vector<Finding> binding_findings(const HostFacts& host) {
  std::vector<Finding> out;
  // Ranks pinned to one identical CPU set: every rank of the set competes for those CPUs.
  std::map<std::vector<int>, std::vector<int>> ranks_by_cpus;
  for (const auto& rank : host.ranks) {
    if (!rank.cpus.empty()) ranks_by_cpus[rank.cpus].push_back(rank.rank);
  }
  for (const auto& [cpus, ranks] : ranks_by_cpus) {
    // Unbound ranks share every CPU of the host by design; only a set narrower than the ranks
    // that share it is a problem.
    if (ranks.size() < 2 || cpus.size() >= ranks.size()) continue;
    out.push_back(Finding{
        "ranks.shared_cpus",
        Severity::kWarning,
        fmt::format("ranks {} on {} are all bound to CPU{} {}", rank_list(ranks), host.host,
                    cpus.size() == 1 ? "" : "s", cpu_list(cpus)),
        {host.host},
        "ranks bound to fewer CPUs than there are ranks take turns on them: the host's proxy "
        "and progress threads stall, and so does every collective; bind one rank per GPU to its "
        "own cores (mpirun --map-by ppr:N:node --bind-to numa, srun --cpu-bind)",
        std::string(kBindingSource)});
  }

  // Each rank's GPU in PCI bus order, as the local rank picks it.
  std::vector<const GpuFact*> gpus;
  for (const auto& gpu : host.gpus) gpus.push_back(&gpu);
  std::sort(gpus.begin(), gpus.end(),
            [](const GpuFact* a, const GpuFact* b) { return a->pci_bus_id < b->pci_bus_id; });
  for (const auto& rank : host.ranks) {
    if (rank.local_rank < 0 || rank.local_rank >= static_cast<int>(gpus.size())) continue;
    const GpuFact& gpu = *gpus[static_cast<std::size_t>(rank.local_rank)];
    if (!gpu.numa_node || *gpu.numa_node < 0 || rank.numa_nodes.empty()) continue;
    const bool near = std::find(rank.numa_nodes.begin(), rank.numa_nodes.end(), *gpu.numa_node) !=
                      rank.numa_nodes.end();
    if (near) continue;
    out.push_back(Finding{
        "ranks.gpu_numa",
        Severity::kWarning,
        fmt::format("rank {} on {} runs on NUMA node{} {} but its GPU {} is on NUMA node {}",
                    rank.rank, host.host, rank.numa_nodes.size() == 1 ? "" : "s",
                    fmt::join(rank.numa_nodes, ","), gpu.pci_bus_id, *gpu.numa_node),
        {host.host},
        "the rank's host memory, its copies to the GPU and NCCL's proxy thread then cross the "
        "link between sockets; bind each rank to its GPU's NUMA node",
        std::string(kBindingSource)});
  }
  return out;
}

}  // namespace collbench::doctor
