// Which host or link is slow: an analysis over result rows, for collbench-report --suspects and
// the report's "Slow nodes and links" section.
//
// Two kinds of evidence. Pair evidence comes from rows measured in two-node groups (collbench
// --split pairs or sample): every pair's level of bus bandwidth, fitted over the points it was
// measured at, against the pairs a host is not in shows a host whose pairs are all slow, or one
// slow link between good hosts.
// Straggler evidence comes from every row: the rank that finished last, and by how much.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/name.h"
#include "collbench/report/results.h"
#include "collbench/suspects_record.h"
#include "collbench/topology.h"

namespace collbench::report {

/// The rule's constants, with why (docs in suspects.cpp next to their use).
struct SuspectRule {
  /// Sizes below this measure latency, not bandwidth: a slow link or NIC shows at large sizes.
  /// Pair points below it are used only for a test measured at no size this large.
  std::uint64_t min_pair_bytes = std::uint64_t{1} << 20;
  /// A measured point needs this many pairs for its median to be a reference.
  int min_pairs_per_point = 3;
  /// A host or link is compared with at least this many other pairs (N >= 4 hosts).
  int min_reference_pairs = 3;
  /// Smallest shortfall named, as a fraction of the reference: below it differences are the
  /// ordinary run-to-run variation of network bandwidth, not a reason to exclude a node.
  double min_effect = 0.10;
  /// A shortfall (in logs) must also exceed this many standard deviations of a pair's level
  /// (the larger of what the pairs' own rows show and the spread of the reference pairs), so
  /// that a noisy fabric needs a larger shortfall. 3.5 keeps 10% noise from naming anything
  /// (tests: 1 of 1000 sets with 3 sizes) while a pair or host at half speed is still found
  /// through it, and a 20x slower one through the noise of a loaded 2-core machine.
  double spread_factor = 3.5;
  /// Straggler naming: the binomial test's level, divided among the hosts tested (Bonferroni).
  double straggler_alpha = 1e-3;
  /// ... and the median excess of the slowest rank's time over the mean rank's it must reach.
  double min_straggler_excess = 0.05;
  /// ... and at least this many rows in which the host took part.
  int min_straggler_rows = 10;
};

/// One node pair measured in two-node groups.
struct PairStat {
  Name a, b;         ///< a < b
  double ratio = 0;  ///< its fitted level of busbw over the median pair's (1: the median pair)
  int samples = 0;   ///< rows the level was fitted from
  double busbw = 0;  ///< median busbw of its rows at the largest size used (GB/s)
  /// Median time of its rows at the smallest size it was measured at (µs; 0 when unknown): its
  /// latency, where the smallest size is a small one.
  double latency_us = 0;
};

/// Pair evidence of one host.
struct HostPairs {
  Name host;
  double ratio = 0;  ///< median of its pairs' ratios
  int pairs = 0;
  int slow_pairs = 0;           ///< its pairs below reference x (1 - min_effect)
  double reference = 0;         ///< median ratio of the other pairs
  double reference_spread = 0;  ///< spread of one pair's level (in logs, about a fraction)
  double threshold = 0;         ///< what the median of its pairs' ratios must be below to name it
};

/// How often a host (rank < 0) or a rank was the slowest of a row.
struct Straggler {
  Name host;
  int rank = -1;             ///< -1: the host as a whole
  std::size_t slowest = 0;   ///< rows in which it was the slowest
  std::size_t rows = 0;      ///< rows it took part in
  double chance = 0;         ///< the mean over those rows of 1 / (hosts or ranks in the row)
  double median_excess = 0;  ///< median of slowest/mean - 1 over the rows it was slowest in
  double p_value = 1;        ///< of being slowest this often by chance (hosts only)
  bool named = false;
  double share() const { return rows ? static_cast<double>(slowest) / rows : 0; }
};

enum class Evidence { kPairs, kStragglers, kBoth };
std::string_view name(Evidence evidence);

struct SuspectHost {
  Name host;
  Evidence evidence = Evidence::kPairs;
  double effect = 0;   ///< the larger of the pair shortfall and the straggler excess
  std::string reason;  ///< in words
};

struct SlowLink {
  Name a, b;
  double ratio = 0;  ///< the pair's median ratio
  double effect = 0;
  std::string reason;
};

/// A switch whose uplink is slow: the pairs that cross it (one host below it, one outside) are
/// slow, while pairs of its own hosts and pairs elsewhere are not.
struct SlowSwitch {
  std::string node;    ///< the switch below the slow uplink
  std::string parent;  ///< the switch the uplink goes to
  /// Switches below `parent` whose uplinks no pair tells apart from this one's (with two
  /// leaves, every pair that crosses one leaf's uplink crosses the other's too).
  std::vector<std::string> alike;
  int pairs = 0;     ///< pairs that cross it
  double ratio = 0;  ///< their median level over the median of the pairs that do not
  double effect = 0;
  std::string reason;
};

struct SuspectReport {
  std::vector<Name> hosts;  ///< every host with pair evidence, by name
  std::vector<PairStat> pairs;
  std::vector<HostPairs> host_pairs;
  std::vector<SuspectHost> suspects;  ///< most suspect first
  std::vector<SlowLink> links;        ///< most suspect first
  std::vector<SlowSwitch> switches;   ///< with a topology: slow uplinks, most suspect first
  std::vector<Straggler> stragglers;  ///< hosts with their ranks below each, most often first
  std::size_t group_rows = 0;         ///< rows measured in a group (--split)
  std::size_t pair_rows = 0;          ///< of those, two-node pair rows used as pair evidence

  /// Whether the report shows the section: grouped rows, or anything named.
  bool worth_showing() const {
    return group_rows > 0 || !suspects.empty() || !links.empty() || !switches.empty();
  }
  /// The pair of two hosts, if measured.
  const PairStat* pair(Name a, Name b) const;
};

/// The analysis: a pure function of the rows (status ok ones) and, for the hosts of rows
/// measured by the whole job, the runs' context records.
/// With `topology`, slow uplinks are judged first (SlowSwitch), and the pairs that cross a slow
/// one are left out of the judgement of hosts and links: hosts behind a slow uplink are not bad
/// nodes.
SuspectReport find_suspects(const ResultSet& set, const SuspectRule& rule = {},
                            const NetworkTopology* topology = nullptr);

/// What was named, as the record collbench-report --suspects --json prints
/// (collbench/suspects_record.h).
SuspectsRecord suspects_record(const SuspectReport& report);

/// collbench-report --suspects's standard output: one suspect host per line, most suspect first,
/// then "# slow link: a <-> b: 41% of the median pair" lines, then "# slow switch: leaf2 (uplink
/// to spine): ..." lines; "" when nothing is named.
std::string suspects_text(const SuspectReport& report);

/// One-sided binomial test: P(X >= k) for X ~ Binomial(n, p).
double binomial_tail(std::size_t k, std::size_t n, double p);

}  // namespace collbench::report
