// The policy that holds a campaign's node counts to what its Slurm partitions can give.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "collbench/sweep/campaign.h"

namespace collbench::sweep {

/// Limits of a Slurm partition.
struct PartitionLimits {
  std::string name;  ///< the partition's real name (the default partition's, when asked for "")
  int total_nodes = 0;
  std::optional<int> max_nodes;  ///< MaxNodes; nullopt when UNLIMITED
  bool exists = true;            ///< false: Slurm has no partition of that name
  /// Its hosts (Nodes=), in Slurm's order; empty when Slurm lists none or a list this cannot
  /// read. A placement: across run's nodes are drawn from them.
  std::vector<std::string> hosts;
};

/// Checks every node count against the partitions' limits; `lookup` returns nullopt when the
/// scheduler cannot tell (then nothing is checked). Throws Error(kUsage) at the node count's mark.
void check_partition_limits(
    const Campaign& campaign,
    const std::function<std::optional<PartitionLimits>(const std::string& partition)>& lookup);

}  // namespace collbench::sweep
