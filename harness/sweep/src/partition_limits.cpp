#include "collbench/sweep/partition_limits.h"

#include <fmt/format.h>

#include "collbench/error.h"

namespace collbench::sweep {
namespace {

// The most nodes a job may have in the partition, and why, as Slurm would say it.
std::pair<int, std::string> node_allowance(const PartitionLimits& limits) {
  if (limits.max_nodes && *limits.max_nodes < limits.total_nodes) {
    return {*limits.max_nodes, fmt::format("its MaxNodes is {}", *limits.max_nodes)};
  }
  return {limits.total_nodes,
          fmt::format("it has {} node{}", limits.total_nodes, limits.total_nodes == 1 ? "" : "s")};
}

}  // namespace

void check_partition_limits(
    const Campaign& campaign,
    const std::function<std::optional<PartitionLimits>(const std::string& partition)>& lookup) {
  for (const auto& p : campaign.partitions) {
    const auto limits = lookup(p.name);
    if (!limits) continue;
    if (!limits->exists) {
      throw_usage("{}: Slurm has no partition '{}'; fix the name (sinfo lists the partitions)",
                  p.mark.str(), p.name);
    }
    const auto [allowed, why] = node_allowance(*limits);
    for (std::size_t i = 0; i < campaign.nodes.size(); ++i) {
      if (campaign.nodes[i] <= allowed) continue;
      const SourceMark at = i < campaign.node_marks.size() ? campaign.node_marks[i] : p.mark;
      throw_usage(
          "{}: nodes: {} is more than partition '{}' allows ({}, says Slurm); remove {} from "
          "nodes or use a partition with more nodes",
          at.str(), campaign.nodes[i], limits->name.empty() ? p.label() : limits->name, why,
          campaign.nodes[i]);
    }
  }
}

}  // namespace collbench::sweep
