// Where a campaign's runs sit on the network's tree (the campaign's placement:, topology: and
// switch_wait: keys): the tree read, the hosts a placement: across run asks Slurm for, the check
// that a run's placement can be met at all, and the label a collected run gets from the hosts it
// really ran on.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "collbench/sweep/campaign.h"
#include "collbench/sweep/matrix.h"
#include "collbench/topology.h"

namespace collbench::sweep {

/// The campaign's network tree, or nullopt when it has no topology: key: its file (relative to
/// the campaign file's directory) or, for topology: slurm, the text `show_topology` returns
/// (what `scontrol show topology` prints). Throws Error(kUsage) starting with the key's place
/// when the tree cannot be read or places no host.
std::optional<NetworkTopology> campaign_topology(const Campaign& campaign,
                                                 const std::function<std::string()>& show_topology);

/// Hosts under one leaf switch.
struct Leaf {
  std::string name;
  std::vector<std::string> hosts;  ///< in the order they were given
};

/// Hosts grouped by the leaf switch the topology attaches them to.
struct LeafHosts {
  std::vector<Leaf> leaves;          ///< in the order of each leaf's first host
  std::vector<std::string> missing;  ///< the hosts the topology does not place, in order
  /// How many hosts the leaves hold.
  std::size_t placed() const;
};

/// `hosts` grouped by leaf (a host the topology lacks under its short name, before the first
/// '.', is looked up under that too).
LeafHosts hosts_by_leaf(const NetworkTopology& topology, const std::vector<std::string>& hosts);

/// Up to `count` hosts taken round-robin over the leaves: each leaf's first host, in the leaves'
/// order, then each leaf's second, and so on; the same hosts every time for the same input.
std::vector<std::string> round_robin_hosts(const LeafHosts& hosts, int count);

/// The hosts a partition's runs may be given ("" = the default partition): the partition's
/// hosts as Slurm lists them; nullopt when Slurm cannot tell (then every host of the topology).
using PartitionHosts =
    std::function<std::optional<std::vector<std::string>>(const std::string& partition)>;

/// Checks that every run's placement can be met on `topology` and gives each placement: across
/// run its nodelist (round_robin_hosts over the partition's hosts). Throws Error(kUsage), one
/// line starting with the campaign's place and naming the fix, when a placement cannot be met:
/// across with the partition's hosts on one leaf, or fewer of them placed than the run's nodes;
/// same-leaf with no leaf holding the run's nodes.
void place_runs(const Campaign& campaign, std::vector<RunSpec>& runs,
                const NetworkTopology& topology, const PartitionHosts& partition_hosts);

/// The sbatch arguments of a run's placement: --switches=1@<switch_wait> for same-leaf,
/// --nodelist=<hosts> for across, none for any. Throws Error(kRuntime) for an across run that
/// place_runs has not placed.
std::vector<std::string> placement_sbatch_args(const Campaign& campaign, const RunSpec& run);

/// What plan says about a run's placement: the sbatch argument and what Slurm does with it, and
/// for across each host's leaf switch in `topology`; empty for any.
std::string describe_placement(const Campaign& campaign, const RunSpec& run,
                               const NetworkTopology& topology);

/// Where a run's hosts were on the tree.
struct LandedPlacement {
  /// The level of the lowest switch every host shares, as NetworkTopology::common() counts it (1:
  /// their leaf, 2: the switch above the leaves, ...); nullopt when unknown: a host the topology
  /// does not place, hosts that share no switch, or no hosts known.
  std::optional<int> level;
  std::vector<std::string> missing;  ///< the hosts the topology does not place
  /// The run's placement label: "same-leaf", "across-level-N" or "unknown".
  std::string label() const;
};

/// The placement of a run on `hosts` (its run context's hosts).
LandedPlacement landed_placement(const NetworkTopology& topology,
                                 const std::vector<std::string>& hosts);

/// Throws Error(kUsage) when a variant of the campaign asks for a placement: local runs share
/// one host, which no switch separates.
void refuse_local_placement(const Campaign& campaign);

}  // namespace collbench::sweep
