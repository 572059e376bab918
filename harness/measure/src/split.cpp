#include "collbench/split.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstddef>
#include <limits>
#include <map>
#include <optional>

#include "collbench/error.h"

namespace collbench {
namespace {

constexpr std::string_view kSplitForms =
    "node, rail, pairs, sample:K (K from 1 to 1000000 rounds) or nccl-tests";
static_assert(kMaxSampleRounds == 1'000'000, "kSplitForms names the largest K");
constexpr std::string_view kNcclTestsSplitForms =
    "<op><value>, op one of AND OR MOD DIV (any case) or & | % /, value decimal, 0x hex, 0b "
    "binary or 0-prefixed octal, e.g. \"MOD 8\" or \"&0x7\"";

bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

std::string_view trim_left(std::string_view text) {
  while (!text.empty() && is_blank(text.front())) text.remove_prefix(1);
  return text;
}

std::string_view trim_right(std::string_view text) {
  while (!text.empty() && is_blank(text.back())) text.remove_suffix(1);
  return text;
}

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool starts_with_nocase(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i) {
    if (lower(text[i]) != lower(prefix[i])) return false;
  }
  return true;
}

int digit_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  const char l = lower(c);
  if (l >= 'a' && l <= 'z') return l - 'a' + 10;
  return 99;
}

/// Reads all of `digits` (non-empty) in `base`; nullopt when a character is not a digit of the
/// base or the value passes `max`.
std::optional<std::uint64_t> read_digits(std::string_view digits, int base, std::uint64_t max) {
  if (digits.empty()) return std::nullopt;
  std::uint64_t value = 0;
  for (char c : digits) {
    const int d = digit_value(c);
    if (d >= base) return std::nullopt;
    const auto b = static_cast<std::uint64_t>(base);
    if (value > (max - static_cast<std::uint64_t>(d)) / b) return std::nullopt;
    value = value * b + static_cast<std::uint64_t>(d);
  }
  return value;
}

/// nccl-tests' value syntax: 0b binary, 0x hex, leading 0 octal, else decimal (strtoul base 0
/// after a 0b check), at most INT_MAX since nccl-tests keeps it in an int.
std::optional<std::uint64_t> read_nccl_tests_value(std::string_view text) {
  constexpr auto kMax = static_cast<std::uint64_t>(INT_MAX);
  if (starts_with_nocase(text, "0b")) return read_digits(text.substr(2), 2, kMax);
  if (starts_with_nocase(text, "0x")) return read_digits(text.substr(2), 16, kMax);
  if (text.size() > 1 && text.front() == '0') return read_digits(text.substr(1), 8, kMax);
  return read_digits(text, 10, kMax);
}

std::string_view op_name(NcclTestsSplit::Op op) {
  switch (op) {
    case NcclTestsSplit::Op::kAnd:
      return "AND";
    case NcclTestsSplit::Op::kOr:
      return "OR";
    case NcclTestsSplit::Op::kMod:
      return "MOD";
    case NcclTestsSplit::Op::kDiv:
      return "DIV";
  }
  return "?";
}

/// A small, fully specified generator (splitmix64) so that every rank and every build draws
/// the same rounds from the same seed.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, bound), bound > 0, without modulo bias (rejects the short last block).
  std::uint64_t below(std::uint64_t bound) {
    const std::uint64_t threshold = (0 - bound) % bound;
    for (;;) {
      const std::uint64_t r = next();
      if (r >= threshold) return r % bound;
    }
  }

 private:
  std::uint64_t state_;
};

/// Renumbers raw group keys densely in order of each group's lowest rank; negative keys (sit
/// out) stay -1.
SplitRound dense_round(const std::vector<long long>& keys) {
  SplitRound round;
  round.color.assign(keys.size(), -1);
  std::map<long long, int> numbers;
  for (std::size_t rank = 0; rank < keys.size(); ++rank) {
    if (keys[rank] < 0) continue;
    const auto [it, added] = numbers.try_emplace(keys[rank], static_cast<int>(numbers.size()));
    round.color[rank] = it->second;
  }
  return round;
}

/// The job's nodes, numbered densely in order of their lowest rank (RankPlace promises this
/// numbering already; renumbering keeps a sparse or shuffled numbering harmless).
struct Nodes {
  std::vector<int> of_rank;     ///< dense node of each rank
  std::vector<int> rank_count;  ///< ranks on each dense node
};

Nodes number_nodes(std::span<const RankPlace> places) {
  Nodes nodes;
  std::map<int, int> dense;
  nodes.of_rank.reserve(places.size());
  for (const RankPlace& place : places) {
    const auto [it, added] = dense.try_emplace(place.node, static_cast<int>(dense.size()));
    if (added) nodes.rank_count.push_back(0);
    ++nodes.rank_count[static_cast<std::size_t>(it->second)];
    nodes.of_rank.push_back(it->second);
  }
  // Two ranks claiming one local rank on one node is a bug in whoever placed them: rail groups
  // would then hold two ranks of one node.
  std::map<std::pair<int, int>, std::size_t> seen;
  for (std::size_t rank = 0; rank < places.size(); ++rank) {
    const auto [it, added] =
        seen.try_emplace(std::pair{nodes.of_rank[rank], places[rank].local_rank}, rank);
    if (!added) {
      throw_runtime("--split: ranks {} and {} both run as local rank {} of node {}", it->second,
                    rank, places[rank].local_rank, places[rank].node);
    }
  }
  return nodes;
}

SplitRound pairs_round(const std::vector<std::pair<int, int>>& pairs, const Nodes& nodes) {
  std::vector<long long> pair_of_node(nodes.rank_count.size(), -1);
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    pair_of_node[static_cast<std::size_t>(pairs[i].first)] = static_cast<long long>(i);
    pair_of_node[static_cast<std::size_t>(pairs[i].second)] = static_cast<long long>(i);
  }
  std::vector<long long> keys;
  keys.reserve(nodes.of_rank.size());
  for (int node : nodes.of_rank) keys.push_back(pair_of_node[static_cast<std::size_t>(node)]);
  return dense_round(keys);
}

void require_two_nodes(const SplitSpec& spec, const Nodes& nodes) {
  if (nodes.rank_count.size() >= 2) return;
  const std::string mode = spec.mode == SplitMode::kSample
                               ? fmt::format("sample:{}", spec.sample_rounds)
                               : std::string(name(spec.mode));
  throw_usage(
      "--split {}: pairs nodes, but the job runs on {} node{}; run on 2 or more nodes, or use "
      "--split node for the paths inside a node",
      mode, nodes.rank_count.size(), nodes.rank_count.size() == 1 ? "" : "s");
}

void sort_round(std::vector<std::pair<int, int>>& round) {
  for (auto& pair : round) {
    if (pair.first > pair.second) std::swap(pair.first, pair.second);
  }
  std::sort(round.begin(), round.end());
}

}  // namespace

int NcclTestsSplit::color(int rank) const {
  const auto r = static_cast<std::uint64_t>(rank);
  switch (op) {
    case Op::kAnd:
      return static_cast<int>(r & value);
    case Op::kOr:
      return static_cast<int>(r | value);
    case Op::kMod:
    case Op::kDiv:
      if (value == 0) {
        throw_usage("NCCL_TESTS_SPLIT \"{} 0\": divides by zero; give a value of 1 or more",
                    op_name(op));
      }
      return static_cast<int>(op == Op::kMod ? r % value : r / value);
  }
  return 0;
}

NcclTestsSplit parse_nccl_tests_split(std::string_view text) {
  struct Spelling {
    std::string_view text;
    NcclTestsSplit::Op op;
  };
  static constexpr Spelling kSpellings[] = {
      {"AND", NcclTestsSplit::Op::kAnd}, {"&", NcclTestsSplit::Op::kAnd},
      {"OR", NcclTestsSplit::Op::kOr},   {"|", NcclTestsSplit::Op::kOr},
      {"MOD", NcclTestsSplit::Op::kMod}, {"%", NcclTestsSplit::Op::kMod},
      {"DIV", NcclTestsSplit::Op::kDiv}, {"/", NcclTestsSplit::Op::kDiv},
  };
  // nccl-tests matches the op at the very start of the text (a leading blank matches nothing).
  const Spelling* found = nullptr;
  for (const Spelling& spelling : kSpellings) {
    if (starts_with_nocase(text, spelling.text)) {
      found = &spelling;
      break;
    }
  }
  if (found == nullptr) {
    throw_usage("NCCL_TESTS_SPLIT {:?}: no operation at its start; expected {}", text,
                kNcclTestsSplitForms);
  }
  const std::string_view value_text = trim_right(trim_left(text.substr(found->text.size())));
  const auto value = read_nccl_tests_value(value_text);
  if (!value) {
    throw_usage("NCCL_TESTS_SPLIT {:?}: {:?} is not a value from 0 to {}; expected {}", text,
                value_text, INT_MAX, kNcclTestsSplitForms);
  }
  if (*value == 0 &&
      (found->op == NcclTestsSplit::Op::kMod || found->op == NcclTestsSplit::Op::kDiv)) {
    throw_usage("NCCL_TESTS_SPLIT {:?}: {} 0 divides by zero; give a value of 1 or more", text,
                op_name(found->op));
  }
  return NcclTestsSplit{found->op, *value};
}

NcclTestsSplit parse_nccl_tests_split_mask(std::string_view text) {
  // nccl-tests reads the mask with strtoul(..., 16): leading blanks and "0x" are optional.
  std::string_view digits = trim_right(trim_left(text));
  if (starts_with_nocase(digits, "0x")) digits.remove_prefix(2);
  while (digits.size() > 1 && digits.front() == '0') digits.remove_prefix(1);
  const auto mask = read_digits(digits, 16, std::numeric_limits<std::uint64_t>::max());
  if (!mask) {
    throw_usage(
        "NCCL_TESTS_SPLIT_MASK {:?}: expected a hexadecimal mask of up to 64 bits (\"0x\" "
        "optional: 7 and 0x7 are the same, 10 is 0x10), e.g. NCCL_TESTS_SPLIT_MASK=0x7",
        text);
  }
  return NcclTestsSplit{NcclTestsSplit::Op::kAnd, *mask};
}

std::string describe(const NcclTestsSplit& rule) {
  if (rule.op == NcclTestsSplit::Op::kAnd || rule.op == NcclTestsSplit::Op::kOr) {
    return fmt::format("{} {:#x}", op_name(rule.op), rule.value);
  }
  return fmt::format("{} {}", op_name(rule.op), rule.value);
}

SplitSpec parse_split(std::string_view text, const std::function<const char*(const char*)>& env) {
  SplitSpec spec;
  if (text == "node") {
    spec.mode = SplitMode::kNode;
  } else if (text == "rail") {
    spec.mode = SplitMode::kRail;
  } else if (text == "pairs") {
    spec.mode = SplitMode::kPairs;
  } else if (text == "sample" || text.starts_with("sample:")) {
    spec.mode = SplitMode::kSample;
    const std::string_view count = text.size() > 7 ? text.substr(7) : std::string_view{};
    // Decimal only, no sign, no blanks: the count of rounds as a person types it.
    const auto rounds = read_digits(count, 10, static_cast<std::uint64_t>(kMaxSampleRounds));
    if (!rounds || *rounds == 0) {
      throw_usage(
          "--split {:?}: sample needs its number of rounds K, from 1 to {}, as sample:K (e.g. "
          "sample:8)",
          text, kMaxSampleRounds);
    }
    spec.sample_rounds = static_cast<int>(*rounds);
  } else if (text == "nccl-tests") {
    spec.mode = SplitMode::kNcclTests;
    // nccl-tests reads the mask first and, when it is set, never looks at NCCL_TESTS_SPLIT.
    if (const char* mask = env("NCCL_TESTS_SPLIT_MASK")) {
      if (*mask == '\0') {
        throw_usage(
            "--split nccl-tests: NCCL_TESTS_SPLIT_MASK is set but empty (nccl-tests would read "
            "mask 0, no split, and ignore NCCL_TESTS_SPLIT); unset it or give a hex mask");
      }
      spec.nccl_tests = parse_nccl_tests_split_mask(mask);
    } else if (const char* split = env("NCCL_TESTS_SPLIT")) {
      spec.nccl_tests = parse_nccl_tests_split(split);
    } else {
      throw_usage(
          "--split nccl-tests: neither NCCL_TESTS_SPLIT nor NCCL_TESTS_SPLIT_MASK is set; set "
          "one (e.g. NCCL_TESTS_SPLIT=\"MOD 8\") or use --split {}",
          "node, rail, pairs or sample:K");
    }
  } else {
    throw_usage("--split {:?}: unknown split; expected {}", text, kSplitForms);
  }
  return spec;
}

int group_count(const SplitRound& round) {
  int largest = -1;
  for (int color : round.color) largest = std::max(largest, color);
  return largest + 1;
}

std::vector<SplitRound> split_rounds(const SplitSpec& spec, std::span<const RankPlace> places) {
  const Nodes nodes = number_nodes(places);
  std::vector<SplitRound> rounds;
  switch (spec.mode) {
    case SplitMode::kNode: {
      if (!places.empty() && std::all_of(nodes.rank_count.begin(), nodes.rank_count.end(),
                                         [](int count) { return count == 1; })) {
        throw_usage(
            "--split node: every node runs one rank, so no group has two ranks to measure "
            "between; launch several ranks per node, or use --split pairs for the links "
            "between nodes");
      }
      std::vector<long long> keys(nodes.of_rank.begin(), nodes.of_rank.end());
      rounds.push_back(dense_round(keys));
      break;
    }
    case SplitMode::kRail: {
      if (nodes.rank_count.size() < 2) {
        throw_usage(
            "--split rail: the job runs on {} node{}, so no rail group crosses the network; run "
            "on 2 or more nodes, or use --split node for the paths inside a node",
            nodes.rank_count.size(), nodes.rank_count.size() == 1 ? "" : "s");
      }
      for (std::size_t node = 1; node < nodes.rank_count.size(); ++node) {
        if (nodes.rank_count[node] != nodes.rank_count[0]) {
          throw_usage(
              "--split rail: node 0 runs {} ranks but node {} runs {}, so the rails differ; "
              "launch the same number of ranks on every node, or use --split node or pairs",
              nodes.rank_count[0], node, nodes.rank_count[node]);
        }
      }
      std::vector<long long> keys;
      keys.reserve(places.size());
      for (const RankPlace& place : places) keys.push_back(place.local_rank);
      rounds.push_back(dense_round(keys));
      break;
    }
    case SplitMode::kPairs: {
      require_two_nodes(spec, nodes);
      for (const auto& pairs : round_robin_pairs(static_cast<int>(nodes.rank_count.size()))) {
        rounds.push_back(pairs_round(pairs, nodes));
      }
      break;
    }
    case SplitMode::kSample: {
      require_two_nodes(spec, nodes);
      if (spec.sample_rounds < 1) {
        throw_usage("--split sample:{}: needs 1 or more rounds", spec.sample_rounds);
      }
      for (const auto& pairs :
           random_pairs(static_cast<int>(nodes.rank_count.size()), spec.sample_rounds, spec.seed)) {
        rounds.push_back(pairs_round(pairs, nodes));
      }
      break;
    }
    case SplitMode::kNcclTests: {
      std::vector<long long> keys;
      keys.reserve(places.size());
      for (std::size_t rank = 0; rank < places.size(); ++rank) {
        keys.push_back(spec.nccl_tests.color(static_cast<int>(rank)));
      }
      rounds.push_back(dense_round(keys));
      break;
    }
  }
  return rounds;
}

std::vector<std::vector<std::pair<int, int>>> round_robin_pairs(int nodes) {
  std::vector<std::vector<std::pair<int, int>>> rounds;
  if (nodes < 2) return rounds;
  // Circle method on an even count m: m-1 stays put, the others turn one place per round. With
  // n odd, node n is a dummy and its partner of the round sits out.
  const int m = nodes % 2 == 0 ? nodes : nodes + 1;
  const int turning = m - 1;
  for (int r = 0; r < turning; ++r) {
    std::vector<std::pair<int, int>> round;
    round.reserve(static_cast<std::size_t>(m / 2));
    if (m - 1 < nodes) round.emplace_back(r, m - 1);
    for (int k = 1; k < m / 2; ++k) {
      round.emplace_back((r + k) % turning, (r - k + turning) % turning);
    }
    sort_round(round);
    rounds.push_back(std::move(round));
  }
  return rounds;
}

std::vector<std::vector<std::pair<int, int>>> random_pairs(int nodes, int rounds,
                                                           std::uint64_t seed) {
  std::vector<std::vector<std::pair<int, int>>> result;
  if (nodes < 2 || rounds < 1) return result;
  SplitMix64 rng(seed);
  std::vector<int> order(static_cast<std::size_t>(nodes));
  result.reserve(static_cast<std::size_t>(rounds));
  for (int r = 0; r < rounds; ++r) {
    for (int i = 0; i < nodes; ++i) order[static_cast<std::size_t>(i)] = i;
    // Fisher-Yates: a uniform permutation; neighbours then form a uniform matching, and with
    // n odd the last node (uniform) sits out.
    for (int i = nodes - 1; i > 0; --i) {
      const auto j = static_cast<int>(rng.below(static_cast<std::uint64_t>(i) + 1));
      std::swap(order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>(j)]);
    }
    std::vector<std::pair<int, int>> round;
    round.reserve(static_cast<std::size_t>(nodes / 2));
    for (int i = 0; i + 1 < nodes; i += 2) {
      round.emplace_back(order[static_cast<std::size_t>(i)],
                         order[static_cast<std::size_t>(i + 1)]);
    }
    sort_round(round);
    result.push_back(std::move(round));
  }
  return result;
}

double link_coverage_probability(int nodes, int rounds) {
  if (nodes < 2 || rounds < 1) return 0.0;
  const double n = nodes;
  const double p = std::floor(n / 2) / (n * (n - 1) / 2);
  return 1.0 - std::pow(1.0 - p, rounds);
}

double node_coverage_probability(int nodes, int rounds, int min_partners) {
  if (min_partners <= 0) return 1.0;
  if (nodes < 2 || rounds < 1) return 0.0;
  const int others = nodes - 1;
  if (min_partners > others || min_partners > rounds) return 0.0;
  const double play = nodes % 2 == 0 ? 1.0 : static_cast<double>(nodes - 1) / nodes;
  // dist[d]: probability of d distinct partners so far; min_partners is absorbing (reached).
  std::vector<double> dist(static_cast<std::size_t>(min_partners) + 1, 0.0);
  dist[0] = 1.0;
  for (int r = 0; r < rounds; ++r) {
    for (int d = min_partners - 1; d >= 0; --d) {
      const double step = play * static_cast<double>(others - d) / others;
      const auto i = static_cast<std::size_t>(d);
      dist[i + 1] += dist[i] * step;
      dist[i] *= 1.0 - step;
    }
  }
  return dist[static_cast<std::size_t>(min_partners)];
}

}  // namespace collbench
