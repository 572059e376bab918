// What `collbench-report --suspects` named, as one typed record: the slow hosts and links with
// their evidence. collbench-report writes it (--suspects --json) and collbench-sweep hunt reads
// it, so that no program parses the other's human text; the text form is rendered from it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "collbench/record.h"

namespace collbench {

/// A host named slow.
struct NamedHost {
  std::string host;
  std::string evidence;  ///< "pairs", "stragglers" or "pairs and stragglers"
  /// Its speed against the reference, as a fraction (0.03: its pairs ran at 3% of the pairs it is
  /// not in; for straggler evidence 1 / (1 + its median excess)).
  double ratio = 1;
  std::string reason;  ///< the evidence in words

  static constexpr auto fields() {
    return std::tuple{Field{"host", &NamedHost::host}, Field{"evidence", &NamedHost::evidence},
                      Field{"ratio", &NamedHost::ratio}, Field{"reason", &NamedHost::reason}};
  }
};

/// A link (a pair of hosts) named slow while neither host is.
struct NamedLink {
  std::string a, b;  ///< a < b
  double ratio = 1;  ///< the pair's speed against the other pairs, as a fraction
  std::string reason;

  static constexpr auto fields() {
    return std::tuple{Field{"a", &NamedLink::a}, Field{"b", &NamedLink::b},
                      Field{"ratio", &NamedLink::ratio}, Field{"reason", &NamedLink::reason}};
  }
};

/// A switch whose uplink is slow (with the network's topology): the pairs across it are slow
/// while its own hosts' pairs are not.
struct NamedSwitch {
  std::string node;    ///< the switch below the uplink
  std::string parent;  ///< the switch the uplink goes to
  /// Switches whose uplinks no pair tells apart from this one's (two leaves under one spine).
  std::vector<std::string> alike;
  double ratio = 1;  ///< the crossing pairs' speed against the pairs that do not cross it
  std::string reason;

  /// "leaf0 (uplink to spine)", with "; or the uplink of leaf1: no pair tells them apart"
  /// inside the parentheses when `alike` names any.
  std::string uplink_text() const;

  static constexpr auto fields() {
    return std::tuple{Field{"node", &NamedSwitch::node}, Field{"parent", &NamedSwitch::parent},
                      Field{"alike", &NamedSwitch::alike}, Field{"ratio", &NamedSwitch::ratio},
                      Field{"reason", &NamedSwitch::reason}};
  }
};

/// What the node pairs that meet at one level of the network's tree (or at one switch of it)
/// cost, against the pairs that meet lowest.
struct PlacementCost {
  int level = 0;
  std::string node;  ///< the switch; empty for a whole level
  int pairs = 0;
  double busbw_gbps = 0;  ///< median busbw of its pairs
  /// Its pairs' median speed over the lowest level's (0.62: they run at 62% of it).
  double relative = 1;
  /// Median time of its pairs at the smallest size measured, and over the lowest level's; 0 when
  /// unknown.
  double latency_us = 0, latency_relative = 0;

  static constexpr auto fields() {
    using P = PlacementCost;
    return std::tuple{Field{"level", &P::level},
                      Field{"node", &P::node, Presence::kOmittedWhenEmpty},
                      Field{"pairs", &P::pairs},
                      Field{"busbw_gbps", &P::busbw_gbps},
                      Field{"relative", &P::relative},
                      Field{"latency_us", &P::latency_us},
                      Field{"latency_relative", &P::latency_relative}};
  }
};

/// Did placement matter (with the network's topology): each level's and each switch's cost.
struct PlacementRecord {
  std::string source;                      ///< the topology file
  int reference_level = 0;                 ///< the lowest level any pair meets at
  std::vector<PlacementCost> levels;       ///< one per level, lowest first
  std::vector<PlacementCost> switches;     ///< one per switch above the reference level
  std::vector<std::string> missing_hosts;  ///< hosts with pair evidence the topology lacks

  static constexpr auto fields() {
    using P = PlacementRecord;
    return std::tuple{Field{"source", &P::source}, Field{"reference_level", &P::reference_level},
                      Field{"levels", &P::levels}, Field{"switches", &P::switches},
                      Field{"missing_hosts", &P::missing_hosts}};
  }
};

/// Everything named, most suspect first in each list.
struct SuspectsRecord {
  std::vector<NamedHost> hosts;
  std::vector<NamedLink> links;
  std::vector<NamedSwitch> switches;  ///< only with a topology; absent from the JSON when none
  /// Only with a topology and pair evidence; absent from the JSON otherwise.
  std::optional<PlacementRecord> placement;

  static constexpr auto fields() {
    return std::tuple{Field{"hosts", &SuspectsRecord::hosts},
                      Field{"links", &SuspectsRecord::links},
                      Field{"switches", &SuspectsRecord::switches, Presence::kOmittedWhenEmpty},
                      Field{"placement", &SuspectsRecord::placement, Presence::kOmittedWhenEmpty}};
  }
};

/// The record's "schema" tag: {"name": "collbench-suspects", "version": 1}.
nlohmann::json suspects_schema_tag();

/// The JSON document collbench-report --suspects --json prints: the record with its schema tag.
std::string suspects_json(const SuspectsRecord& record);

/// Reads that document; throws RecordError when it is not one (or a newer version).
SuspectsRecord read_suspects_json(std::string_view text);

/// The text collbench-report --suspects prints: one host per line, most suspect first (ready
/// for sbatch --exclude), then "# slow link: a <-> b: 41% of the median pair" lines, then
/// "# slow switch: leaf2 (uplink to spine): 50% of the pairs that do not cross it" lines; a host
/// name that is not a hostname goes into a comment line instead. "" when nothing is named.
std::string suspects_text(const SuspectsRecord& record);

}  // namespace collbench
