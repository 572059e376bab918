// Did placement matter: the tournament's node pairs set on the network's tree
// (collbench/topology.h). Each pair meets at its lowest common switch; pairs that meet higher
// up cross more uplinks. The verdict is the cost of each level and of each switch pairs meet at,
// against the pairs that meet lowest, so that "crossing the spine costs 38%" is a measured
// statement of this cluster, not a guess.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "collbench/report/suspects.h"
#include "collbench/suspects_record.h"
#include "collbench/topology.h"

namespace collbench::report {

/// Pairs that meet at one level (node empty) or at one switch of it: what they cost, as
/// --suspects --json carries it (PlacementCost), and their median level.
struct PlacementGroup : PlacementCost {
  double ratio = 0;  ///< median of its pairs' levels (PairStat::ratio: 1 is the median pair)
};

struct PlacementVerdict {
  std::string source;                      ///< the topology file
  int reference_level = 0;                 ///< the lowest level any pair meets at
  std::vector<PlacementGroup> levels;      ///< one per level, lowest first
  std::vector<PlacementGroup> switches;    ///< one per switch above the reference level
  std::vector<std::string> missing_hosts;  ///< hosts with pair evidence the topology does not place
  int unconnected_pairs = 0;               ///< pairs whose hosts share no switch
  int pairs = 0;                           ///< pairs placed
  /// The hosts with pair evidence in the tree's order (by their switches from the top down,
  /// then by name; hosts the topology does not place last): the heatmap in this order shows
  /// each switch's hosts as a block.
  std::vector<std::string> host_order;

  /// The verdict in sentences: one per level above the reference, then one per switch.
  std::vector<std::string> sentences() const;
};

/// The verdict on `report`'s pairs (none: no pair evidence, said by an empty `levels`).
PlacementVerdict placement_verdict(const SuspectReport& report, const NetworkTopology& topology);

/// The verdict as the typed record --suspects --json carries (nullopt: no pair evidence).
std::optional<PlacementRecord> placement_record(const PlacementVerdict& verdict);

/// "placed: same leaf switch (level 1)" style names of a level, for tables and sentences.
std::string level_words(int level);

}  // namespace collbench::report
