// --split: which ranks run the chosen tests together, and in how many rounds. Pure logic (no
// MPI, no devices): the runner asks for the rounds once, every rank computes the same answer
// from the same placement, and each group then runs the tests on a communicator of its own.
//
// Modes:
//   node        each node's ranks alone (paths inside a node only);
//   rail        the ranks with the same local rank, one per node (the network only);
//   pairs       a round-robin tournament of nodes: every pair of nodes meets exactly once.
//               Circle method: with N even, N-1 rounds of N/2 disjoint pairs; with N odd, a
//               dummy node is added and its partner sits the round out: N rounds of (N-1)/2
//               pairs, every node sitting out exactly once;
//   sample:K    K rounds of random disjoint node pairs (seeded, the same on every rank and
//               every build: the generator and the shuffle are written out here, not taken
//               from the standard library, whose distributions differ between vendors);
//   nccl-tests  nccl-tests' own environment variables (below).
//
// nccl-tests compatibility (nccl-tests 2.x, src/common.cu, run(); README "Running multiple
// operations in parallel"). Each process computes a color from its MPI_COMM_WORLD rank (the
// process rank: with several GPUs per process they all share it; collbench runs one device
// per rank, so it is the rank) and the world is split by color, ordered by rank:
//   * NCCL_TESTS_SPLIT_MASK=<hex>: color = rank & mask. The mask is always read as
//     hexadecimal, "0x" optional ("10" is 16). When it is set it wins: NCCL_TESTS_SPLIT is
//     then not read at all (nccl-tests checks the mask first).
//   * NCCL_TESTS_SPLIT="<op><value>": op is AND, OR, MOD or DIV (any case) or the symbols
//     &, |, %, /; the op starts the text (no leading blanks); blanks may separate op and
//     value; the value is 0b/0B binary, 0x/0X hex, a leading 0 octal ("010" is 8), otherwise
//     decimal, and is taken as a C int. color = rank & v, rank | v, rank % v or rank / v.
//   Where nccl-tests silently falls back to color 0 (one group, no split) or reads a prefix
//   of the text (unknown op, no digits, "MOD 8x", a sign) or crashes (MOD 0, DIV 0),
//   collbench refuses the text with a usage error instead; trailing blanks are accepted.
//   nccl-tests prints the raw color as the group; collbench renumbers groups densely
//   (0..groups-1, ordered by each group's lowest rank), which keeps the same partition.
//
// Colors. In every round, groups are numbered 0..groups-1 in order of their lowest rank, so
// group numbers are stable and read in rank order; -1 marks a rank sitting the round out.
//
// Sampling's blind spots (link_coverage_probability, node_coverage_probability). A random
// round shuffles the nodes uniformly and pairs neighbours, so it is a uniformly random
// matching (N odd: a uniformly random node sits out and the rest are uniformly matched).
// Rounds use independent shuffles.
//   * A given pair {a, b} meets in a round with probability p = floor(N/2) / C(N, 2): the
//     round holds floor(N/2) of the C(N, 2) possible pairs and, by symmetry, each equally
//     likely. N even: p = 1/(N-1) (a's partner is uniform over the N-1 others); N odd:
//     p = 1/N. Independent rounds: P(the link is measured at least once) = 1 - (1 - p)^K.
//   * A given node plays a round with probability q (1 for N even, (N-1)/N for N odd) and
//     then meets a partner uniform over the M = N-1 others, independently per round. The
//     number D of distinct partners after K rounds is the classical occupancy count:
//       P(D = d) = sum_j C(K, j) q^j (1-q)^(K-j) * C(M, d) d! S(j, d) / M^j
//     (j rounds played; S = Stirling numbers of the second kind: ways j draws cover exactly
//     d of the M partners). node_coverage_probability returns P(D >= m), computed through
//     the equivalent Markov chain (one round takes D from d to d+1 with probability
//     q (M-d)/M, else D stays), which is exact and stable in floating point.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collbench/types.h"

namespace collbench {

/// Where a rank runs: its node (0..nodes-1, numbered in order of the nodes' lowest rank) and
/// its rank on that node.
struct RankPlace {
  int node = 0;
  int local_rank = 0;
};

/// nccl-tests' color rule (NCCL_TESTS_SPLIT or NCCL_TESTS_SPLIT_MASK).
struct NcclTestsSplit {
  enum class Op { kAnd, kOr, kMod, kDiv };
  Op op = Op::kAnd;
  std::uint64_t value = 0;
  /// nccl-tests' raw color of `rank` (not yet renumbered densely). The parsers give values
  /// that keep it in int range; MOD/DIV by 0 throws a usage error.
  int color(int rank) const;
};

/// Parses an NCCL_TESTS_SPLIT expression; throws Error(ExitCode::kUsage) with one line naming
/// the text and the accepted forms.
NcclTestsSplit parse_nccl_tests_split(std::string_view text);
/// Parses an NCCL_TESTS_SPLIT_MASK value (hexadecimal, "0x" optional, up to 64 bits) as the
/// rule AND mask; throws usage errors like parse_nccl_tests_split.
NcclTestsSplit parse_nccl_tests_split_mask(std::string_view text);
/// The rule as NCCL_TESTS_SPLIT would spell it ("MOD 8", "AND 0x7"), for logs and messages.
std::string describe(const NcclTestsSplit& rule);

/// What --split asked for.
struct SplitSpec {
  SplitMode mode = SplitMode::kNode;
  int sample_rounds = 0;
  std::uint64_t seed = 1;
  NcclTestsSplit nccl_tests;
};

/// The largest K of sample:K (a round runs every chosen test; more is a typo).
inline constexpr int kMaxSampleRounds = 1'000'000;

/// Parses --split TEXT: "node", "rail", "pairs", "sample:K" (K >= 1 rounds), or "nccl-tests"
/// (then the color rule comes from the environment as nccl-tests reads it:
/// NCCL_TESTS_SPLIT_MASK, when set, wins over NCCL_TESTS_SPLIT; neither set is a usage
/// error). `env` returns an environment variable or nullptr (tests pass a fake). Throws usage
/// errors (one line, naming --split and the accepted forms).
SplitSpec parse_split(std::string_view text, const std::function<const char*(const char*)>& env);

/// One round: every rank's group (its color), -1 when the rank sits this round out.
struct SplitRound {
  std::vector<int> color;
};
/// The number of groups in a round (its largest color + 1).
int group_count(const SplitRound& round);

/// The rounds of a split for ranks placed as `places` (indexed by rank). node/rail/nccl-tests:
/// one round. pairs: the tournament's rounds; sample: sample_rounds rounds (seeded by
/// spec.seed). Throws usage errors when the split is impossible, with the reason and the fix:
/// pairs/sample with fewer than 2 nodes; rail when nodes run different rank counts or the
/// job has one node; node when every node runs a single rank (no group has two ranks).
/// Throws Error(kRuntime) when `places` contradicts itself (two ranks with the same local
/// rank on one node).
std::vector<SplitRound> split_rounds(const SplitSpec& spec, std::span<const RankPlace> places);

/// The tournament of n nodes as node pairs per round (the basis of pairs): n-1 rounds for n
/// even, n for n odd (none for n < 2). In each pair first < second; pairs are sorted by first.
std::vector<std::vector<std::pair<int, int>>> round_robin_pairs(int nodes);
/// `rounds` uniformly random rounds of disjoint node pairs (sample), from `seed`; same order
/// conventions as round_robin_pairs. With n odd one node sits out each round.
std::vector<std::vector<std::pair<int, int>>> random_pairs(int nodes, int rounds,
                                                           std::uint64_t seed);

/// Sampling mode's blind spots, for docs and the hunt's summary: the probability that K random
/// rounds of disjoint pairs over n nodes put a given pair of nodes together at least once (a
/// bad link can only be seen then), and that a given node meets at least `min_partners`
/// distinct partners (a bad node is named only from several of its pairs). Closed forms at
/// the top of this file.
double link_coverage_probability(int nodes, int rounds);
double node_coverage_probability(int nodes, int rounds, int min_partners);

}  // namespace collbench
