#include "collbench/split.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "collbench/error.h"

namespace collbench {
namespace {

using Pairs = std::vector<std::pair<int, int>>;

/// Runs `fn`, expects an Error with `code` whose message holds every one of `parts`.
void expect_error(const std::function<void()>& fn, ExitCode code,
                  const std::vector<std::string>& parts) {
  try {
    fn();
    ADD_FAILURE() << "no error; expected one holding " << parts.front();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    for (const std::string& part : parts) {
      EXPECT_NE(message.find(part), std::string::npos) << "'" << part << "' not in: " << message;
    }
  }
}

void expect_usage(const std::function<void()>& fn, const std::vector<std::string>& parts) {
  expect_error(fn, ExitCode::kUsage, parts);
}

/// `nodes` nodes with the given rank counts, ranks laid out node after node.
std::vector<RankPlace> blocked(const std::vector<int>& ranks_per_node) {
  std::vector<RankPlace> places;
  for (int node = 0; node < static_cast<int>(ranks_per_node.size()); ++node) {
    for (int local = 0; local < ranks_per_node[static_cast<std::size_t>(node)]; ++local) {
      places.push_back({node, local});
    }
  }
  return places;
}

SplitSpec spec_of(SplitMode mode, int sample_rounds = 0, std::uint64_t seed = 1) {
  SplitSpec spec;
  spec.mode = mode;
  spec.sample_rounds = sample_rounds;
  spec.seed = seed;
  return spec;
}

/// A fake environment.
std::function<const char*(const char*)> env_of(const std::map<std::string, std::string>& vars) {
  return [vars](const char* key) -> const char* {
    const auto it = vars.find(key);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

/// Checks that a round of pairs over `nodes` nodes is disjoint and well ordered; returns the
/// nodes that sat out.
std::set<int> check_round(const Pairs& round, int nodes) {
  std::set<int> playing;
  for (const auto& [a, b] : round) {
    EXPECT_LT(a, b);
    EXPECT_GE(a, 0);
    EXPECT_LT(b, nodes);
    EXPECT_TRUE(playing.insert(a).second) << "node " << a << " plays twice in a round";
    EXPECT_TRUE(playing.insert(b).second) << "node " << b << " plays twice in a round";
  }
  EXPECT_TRUE(std::is_sorted(round.begin(), round.end()));
  EXPECT_EQ(round.size(), static_cast<std::size_t>(nodes / 2));
  std::set<int> out;
  for (int node = 0; node < nodes; ++node) {
    if (!playing.contains(node)) out.insert(node);
  }
  return out;
}

TEST(Split, TournamentMeetsEveryPairOnceForTwoToTwelveNodes) {
  for (int n = 2; n <= 12; ++n) {
    SCOPED_TRACE(n);
    const auto rounds = round_robin_pairs(n);
    ASSERT_EQ(rounds.size(), static_cast<std::size_t>(n % 2 == 0 ? n - 1 : n));
    std::map<std::pair<int, int>, int> met;
    std::map<int, int> sat_out;
    for (const Pairs& round : rounds) {
      const std::set<int> out = check_round(round, n);
      EXPECT_EQ(out.size(), static_cast<std::size_t>(n % 2));
      for (int node : out) ++sat_out[node];
      for (const auto& pair : round) ++met[pair];
    }
    EXPECT_EQ(met.size(), static_cast<std::size_t>(n * (n - 1) / 2));
    for (const auto& [pair, times] : met) EXPECT_EQ(times, 1) << pair.first << "-" << pair.second;
    if (n % 2 == 1) {
      EXPECT_EQ(sat_out.size(), static_cast<std::size_t>(n));  // each node sits out once
      for (const auto& [node, times] : sat_out) EXPECT_EQ(times, 1) << node;
    }
  }
  EXPECT_TRUE(round_robin_pairs(1).empty());
  EXPECT_TRUE(round_robin_pairs(0).empty());
}

TEST(Split, NodeColorsFollowTheNodesLowestRank) {
  // Ranks spread round-robin over 3 nodes, node 2 with one rank only.
  const std::vector<RankPlace> places{{0, 0}, {1, 0}, {2, 0}, {0, 1}, {1, 1}, {0, 2}};
  const auto rounds = split_rounds(spec_of(SplitMode::kNode), places);
  ASSERT_EQ(rounds.size(), 1u);
  EXPECT_EQ(rounds[0].color, (std::vector<int>{0, 1, 2, 0, 1, 0}));
  EXPECT_EQ(group_count(rounds[0]), 3);
  // A numbering out of rank order still gives dense colors ordered by lowest rank.
  const std::vector<RankPlace> shuffled{{7, 0}, {7, 1}, {3, 0}, {3, 1}, {5, 0}};
  EXPECT_EQ(split_rounds(spec_of(SplitMode::kNode), shuffled)[0].color,
            (std::vector<int>{0, 0, 1, 1, 2}));
}

TEST(Split, RailColorIsTheLocalRank) {
  const std::vector<RankPlace> places{{0, 0}, {1, 0}, {0, 1}, {1, 1}, {0, 2}, {1, 2}};
  const auto rounds = split_rounds(spec_of(SplitMode::kRail), places);
  ASSERT_EQ(rounds.size(), 1u);
  EXPECT_EQ(rounds[0].color, (std::vector<int>{0, 0, 1, 1, 2, 2}));
  EXPECT_EQ(split_rounds(spec_of(SplitMode::kRail), blocked({4, 4, 4}))[0].color,
            (std::vector<int>{0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3}));
}

TEST(Split, RefusesSplitsThatCannotWork) {
  expect_usage(
      [] {
        split_rounds(spec_of(SplitMode::kRail), blocked({2, 3}));
      },
      {"--split rail", "node 0 runs 2 ranks but node 1 runs 3", "same number"});
  expect_usage([] { split_rounds(spec_of(SplitMode::kRail), blocked({8})); },
               {"--split rail", "1 node,", "2 or more nodes"});
  expect_usage(
      [] {
        split_rounds(spec_of(SplitMode::kNode), blocked({1, 1, 1}));
      },
      {"--split node", "one rank", "--split pairs"});
  expect_usage([] { split_rounds(spec_of(SplitMode::kPairs), blocked({8})); },
               {"--split pairs", "1 node;", "2 or more nodes"});
  expect_usage([] { split_rounds(spec_of(SplitMode::kSample, 4), blocked({8})); },
               {"--split sample:4", "1 node;", "2 or more nodes"});
  expect_usage(
      [] {
        split_rounds(spec_of(SplitMode::kSample, 0), blocked({1, 1}));
      },
      {"--split sample:0", "1 or more rounds"});
  // A placement that contradicts itself is a bug, not bad usage.
  const std::vector<RankPlace> twice{{0, 0}, {0, 0}};
  expect_error([&] { split_rounds(spec_of(SplitMode::kNode), twice); }, ExitCode::kRuntime,
               {"ranks 0 and 1", "local rank 0"});
  // One node is fine for node (a single group) and uneven nodes are fine for node and pairs.
  EXPECT_EQ(split_rounds(spec_of(SplitMode::kNode), blocked({4}))[0].color,
            (std::vector<int>{0, 0, 0, 0}));
}

TEST(Split, PairsColorWholeNodesAndSitTheOddNodeOut) {
  const auto places = blocked({2, 3, 1});  // ranks 0-1 node 0, 2-4 node 1, 5 node 2
  const auto rounds = split_rounds(spec_of(SplitMode::kPairs), places);
  const auto tournament = round_robin_pairs(3);
  ASSERT_EQ(rounds.size(), tournament.size());
  std::set<std::pair<int, int>> met;
  for (std::size_t r = 0; r < rounds.size(); ++r) {
    ASSERT_EQ(tournament[r].size(), 1u);
    const auto [a, b] = tournament[r][0];
    met.insert({a, b});
    for (std::size_t rank = 0; rank < places.size(); ++rank) {
      const int node = places[rank].node;
      EXPECT_EQ(rounds[r].color[rank], (node == a || node == b) ? 0 : -1) << r << " " << rank;
    }
    EXPECT_EQ(group_count(rounds[r]), 1);
  }
  EXPECT_EQ(met.size(), 3u);

  // Four nodes of two ranks: two groups a round, numbered by their lowest rank.
  for (const SplitRound& round : split_rounds(spec_of(SplitMode::kPairs), blocked({2, 2, 2, 2}))) {
    EXPECT_EQ(round.color[0], 0);  // node 0 always plays and holds rank 0
    EXPECT_EQ(group_count(round), 2);
    std::map<int, int> size;
    for (int color : round.color) ++size[color];
    EXPECT_EQ(size[0], 4);
    EXPECT_EQ(size[1], 4);
  }
}

TEST(Split, ParsesTheModes) {
  const auto no_env = env_of({});
  EXPECT_EQ(parse_split("node", no_env).mode, SplitMode::kNode);
  EXPECT_EQ(parse_split("rail", no_env).mode, SplitMode::kRail);
  EXPECT_EQ(parse_split("pairs", no_env).mode, SplitMode::kPairs);
  const SplitSpec sample = parse_split("sample:8", no_env);
  EXPECT_EQ(sample.mode, SplitMode::kSample);
  EXPECT_EQ(sample.sample_rounds, 8);
  EXPECT_EQ(parse_split("sample:1000000", no_env).sample_rounds, 1000000);
  for (const char* bad : {"", "nodes", "Node", "pair", "nccl"}) {
    SCOPED_TRACE(bad);
    expect_usage([&] { parse_split(bad, no_env); },
                 {"--split", "unknown split", "node, rail, pairs, sample:K"});
  }
  for (const char* bad : {"sample", "sample:", "sample:0", "sample:-1", "sample:+3", "sample: 3",
                          "sample:8x", "sample:1000001", "sample:99999999999999999999"}) {
    SCOPED_TRACE(bad);
    expect_usage([&] { parse_split(bad, no_env); }, {"--split", bad, "sample:K"});
  }
}

TEST(Split, NcclTestsModeReadsTheEnvironmentAsNcclTestsDoes) {
  const SplitSpec split = parse_split("nccl-tests", env_of({{"NCCL_TESTS_SPLIT", "MOD 8"}}));
  EXPECT_EQ(split.mode, SplitMode::kNcclTests);
  EXPECT_EQ(split.nccl_tests.op, NcclTestsSplit::Op::kMod);
  EXPECT_EQ(split.nccl_tests.value, 8u);
  const SplitSpec mask = parse_split("nccl-tests", env_of({{"NCCL_TESTS_SPLIT_MASK", "7"}}));
  EXPECT_EQ(mask.nccl_tests.op, NcclTestsSplit::Op::kAnd);
  EXPECT_EQ(mask.nccl_tests.value, 7u);
  // nccl-tests reads the mask first; when set, NCCL_TESTS_SPLIT is not read at all.
  const SplitSpec both = parse_split(
      "nccl-tests", env_of({{"NCCL_TESTS_SPLIT", "DIV 8"}, {"NCCL_TESTS_SPLIT_MASK", "0x3"}}));
  EXPECT_EQ(both.nccl_tests.op, NcclTestsSplit::Op::kAnd);
  EXPECT_EQ(both.nccl_tests.value, 3u);
  EXPECT_EQ(parse_split("nccl-tests",
                        env_of({{"NCCL_TESTS_SPLIT", "bad"}, {"NCCL_TESTS_SPLIT_MASK", "1"}}))
                .nccl_tests.value,
            1u);
  expect_usage([] { parse_split("nccl-tests", env_of({})); },
               {"--split nccl-tests", "neither NCCL_TESTS_SPLIT nor NCCL_TESTS_SPLIT_MASK"});
  expect_usage(
      [] {
        parse_split("nccl-tests", env_of({{"NCCL_TESTS_SPLIT_MASK", ""}}));
      },
      {"NCCL_TESTS_SPLIT_MASK is set but empty"});
  expect_usage(
      [] {
        parse_split("nccl-tests", env_of({{"NCCL_TESTS_SPLIT", "XOR 1"}}));
      },
      {"NCCL_TESTS_SPLIT \"XOR 1\"", "AND OR MOD DIV"});
}

TEST(Split, ParsesEveryNcclTestsOperationAndValueForm) {
  struct Case {
    const char* text;
    NcclTestsSplit::Op op;
    std::uint64_t value;
  };
  using Op = NcclTestsSplit::Op;
  const Case cases[] = {
      {"AND 0x7", Op::kAnd, 7},
      {"and 7", Op::kAnd, 7},
      {"&7", Op::kAnd, 7},
      {"& 0b111", Op::kAnd, 7},
      {"And0B101", Op::kAnd, 5},
      {"OR 0x7", Op::kOr, 7},
      {"or\t3", Op::kOr, 3},
      {"|0XfF", Op::kOr, 255},
      {"MOD 8", Op::kMod, 8},
      {"mod8", Op::kMod, 8},
      {"%  8  ", Op::kMod, 8},
      {"MOD 010", Op::kMod, 8},
      {"DIV 8", Op::kDiv, 8},
      {"Div 16", Op::kDiv, 16},
      {"/8", Op::kDiv, 8},
      {"AND 0", Op::kAnd, 0},
      {"AND 2147483647", Op::kAnd, 2147483647},
      {"OR 00", Op::kOr, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    const NcclTestsSplit rule = parse_nccl_tests_split(c.text);
    EXPECT_EQ(rule.op, c.op);
    EXPECT_EQ(rule.value, c.value);
  }
  for (const char* bad :
       {"", " MOD 8", "XOR 1", "MODULO 8", "8", "MOD", "MOD x", "MOD 8x", "MOD 8 nodes", "MOD -1",
        "MOD +1", "MOD 08", "AND 0b", "AND 0x", "AND 0b12", "AND 2147483648", "AND 0x80000000"}) {
    SCOPED_TRACE(bad);
    expect_usage([&] { parse_nccl_tests_split(bad); },
                 {"NCCL_TESTS_SPLIT", std::string("\"") + bad + "\"", "AND OR MOD DIV"});
  }
  // Text from the environment is quoted with escapes: the message stays one line.
  expect_usage([] { parse_nccl_tests_split("MOD 8\nrm"); }, {"\"MOD 8\\nrm\"", "\"8\\nrm\""});
  expect_usage([] { parse_nccl_tests_split("MOD 0"); }, {"\"MOD 0\"", "divides by zero"});
  expect_usage([] { parse_nccl_tests_split("/ 0x0"); }, {"DIV 0", "divides by zero"});
}

TEST(Split, ParsesTheNcclTestsMaskAsHexadecimal) {
  EXPECT_EQ(parse_nccl_tests_split_mask("7").value, 7u);
  EXPECT_EQ(parse_nccl_tests_split_mask("0x7").value, 7u);
  EXPECT_EQ(parse_nccl_tests_split_mask("10").value, 16u);  // strtoul(..., 16): hex, always
  EXPECT_EQ(parse_nccl_tests_split_mask("ff").value, 255u);
  EXPECT_EQ(parse_nccl_tests_split_mask(" 0X1f \n").value, 31u);
  EXPECT_EQ(parse_nccl_tests_split_mask("0").value, 0u);
  EXPECT_EQ(parse_nccl_tests_split_mask("ffffffffffffffff").value, ~std::uint64_t{0});
  EXPECT_EQ(parse_nccl_tests_split_mask("00000000000000000001").value, 1u);
  EXPECT_EQ(parse_nccl_tests_split_mask("0x7").op, NcclTestsSplit::Op::kAnd);
  for (const char* bad : {"", "0x", "g", "-1", "+1", "0x7 7", "1ffffffffffffffff", "AND 7"}) {
    SCOPED_TRACE(bad);
    expect_usage([&] { parse_nccl_tests_split_mask(bad); },
                 {"NCCL_TESTS_SPLIT_MASK", "hexadecimal"});
  }
}

TEST(Split, NcclTestsColorsMatchTheirSemantics) {
  using Op = NcclTestsSplit::Op;
  // The raw colors nccl-tests computes from the world rank.
  EXPECT_EQ((NcclTestsSplit{Op::kAnd, 0x7}.color(13)), 5);
  EXPECT_EQ((NcclTestsSplit{Op::kOr, 0x7}.color(13)), 15);
  EXPECT_EQ((NcclTestsSplit{Op::kMod, 8}.color(13)), 5);
  EXPECT_EQ((NcclTestsSplit{Op::kDiv, 8}.color(13)), 1);
  EXPECT_EQ((NcclTestsSplit{Op::kAnd, ~std::uint64_t{0}}.color(13)), 13);
  expect_usage([] { (void)NcclTestsSplit{Op::kMod, 0}.color(3); }, {"divides by zero"});

  // The README's examples on 2 nodes of 8 GPUs: MOD 8 and AND 0x7 are the rails, DIV 8 and
  // OR 0x7 the nodes, MOD 2 and AND 0x1 every other rank.
  const auto places = blocked({8, 8});
  const auto rail = split_rounds(spec_of(SplitMode::kRail), places)[0].color;
  const auto node = split_rounds(spec_of(SplitMode::kNode), places)[0].color;
  auto nccl = [&](Op op, std::uint64_t value) {
    SplitSpec spec = spec_of(SplitMode::kNcclTests);
    spec.nccl_tests = {op, value};
    const auto rounds = split_rounds(spec, places);
    EXPECT_EQ(rounds.size(), 1u);
    return rounds[0].color;
  };
  EXPECT_EQ(nccl(Op::kMod, 8), rail);
  EXPECT_EQ(nccl(Op::kAnd, 0x7), rail);
  EXPECT_EQ(nccl(Op::kDiv, 8), node);
  EXPECT_EQ(nccl(Op::kOr, 0x7), node);  // raw colors 7 and 15, renumbered 0 and 1
  const std::vector<int> alternate{0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1};
  EXPECT_EQ(nccl(Op::kMod, 2), alternate);
  EXPECT_EQ(nccl(Op::kAnd, 0x1), alternate);

  // Any rule: same raw color <=> same group, and groups numbered by their lowest rank.
  for (const NcclTestsSplit rule : {NcclTestsSplit{Op::kAnd, 0x6}, NcclTestsSplit{Op::kOr, 0x5},
                                    NcclTestsSplit{Op::kMod, 3}, NcclTestsSplit{Op::kDiv, 5}}) {
    SCOPED_TRACE(describe(rule));
    const auto colors = nccl(rule.op, rule.value);
    int next = 0;
    for (int a = 0; a < 16; ++a) {
      if (colors[static_cast<std::size_t>(a)] == next) ++next;
      EXPECT_LT(colors[static_cast<std::size_t>(a)], next);  // first seen in rank order
      for (int b = 0; b < 16; ++b) {
        EXPECT_EQ(rule.color(a) == rule.color(b),
                  colors[static_cast<std::size_t>(a)] == colors[static_cast<std::size_t>(b)]);
      }
    }
  }
  EXPECT_EQ(describe({Op::kMod, 8}), "MOD 8");
  EXPECT_EQ(describe({Op::kAnd, 7}), "AND 0x7");
  EXPECT_EQ(describe({Op::kDiv, 4}), "DIV 4");
  EXPECT_EQ(describe({Op::kOr, 255}), "OR 0xff");
}

TEST(Split, SampleRoundsAreDisjointAndReproducibleBySeed) {
  for (int n : {2, 3, 7, 8, 33, 64}) {
    SCOPED_TRACE(n);
    const auto rounds = random_pairs(n, 6, 42);
    ASSERT_EQ(rounds.size(), 6u);
    for (const Pairs& round : rounds) {
      EXPECT_EQ(check_round(round, n).size(), static_cast<std::size_t>(n % 2));
    }
    EXPECT_EQ(random_pairs(n, 6, 42), rounds);
    if (n >= 7) {
      EXPECT_NE(random_pairs(n, 6, 43), rounds);
    }
  }
  EXPECT_TRUE(random_pairs(1, 4, 1).empty());
  EXPECT_TRUE(random_pairs(8, 0, 1).empty());
  // The generator is written out, so the rounds are pinned: a change of them shows here.
  const std::vector<Pairs> pinned{{{0, 3}, {1, 4}, {2, 5}}, {{0, 5}, {1, 4}, {2, 3}}};
  EXPECT_EQ(random_pairs(6, 2, 2), pinned);

  const auto places = blocked({2, 2, 2, 2, 2});
  const auto sampled = split_rounds(spec_of(SplitMode::kSample, 5, 9), places);
  ASSERT_EQ(sampled.size(), 5u);
  EXPECT_EQ(split_rounds(spec_of(SplitMode::kSample, 5, 9), places)[3].color, sampled[3].color);
  const auto pairs = random_pairs(5, 5, 9);
  for (std::size_t r = 0; r < sampled.size(); ++r) {
    EXPECT_EQ(group_count(sampled[r]), 2);
    int out = 0;
    for (int color : sampled[r].color) out += color == -1;
    EXPECT_EQ(out, 2);  // one node of two ranks sits out
    // Group g holds the ranks of the pair g of random_pairs (both ordered by lowest node).
    for (std::size_t g = 0; g < pairs[r].size(); ++g) {
      EXPECT_EQ(sampled[r].color[static_cast<std::size_t>(pairs[r][g].first) * 2], int(g));
      EXPECT_EQ(sampled[r].color[static_cast<std::size_t>(pairs[r][g].second) * 2 + 1], int(g));
    }
  }
}

TEST(Split, CoverageClosedFormsAtTheirEdges) {
  EXPECT_DOUBLE_EQ(link_coverage_probability(2, 1), 1.0);
  EXPECT_DOUBLE_EQ(link_coverage_probability(8, 1), 1.0 / 7);
  EXPECT_DOUBLE_EQ(link_coverage_probability(9, 1), 1.0 / 9);
  EXPECT_NEAR(link_coverage_probability(64, 2), 1.0 - std::pow(62.0 / 63, 2), 1e-12);
  EXPECT_DOUBLE_EQ(link_coverage_probability(1, 5), 0.0);
  EXPECT_DOUBLE_EQ(link_coverage_probability(8, 0), 0.0);
  // n even, m = K: every partner new, prod (1 - i/(n-1)).
  EXPECT_NEAR(node_coverage_probability(8, 3, 3), (6.0 / 7) * (5.0 / 7), 1e-12);
  EXPECT_NEAR(node_coverage_probability(8, 1, 1), 1.0, 1e-12);
  // n odd: a round is played with probability (n-1)/n.
  EXPECT_NEAR(node_coverage_probability(9, 1, 1), 8.0 / 9, 1e-12);
  EXPECT_NEAR(node_coverage_probability(9, 2, 1), 1.0 - 1.0 / 81, 1e-12);
  EXPECT_DOUBLE_EQ(node_coverage_probability(8, 3, 0), 1.0);
  EXPECT_DOUBLE_EQ(node_coverage_probability(8, 3, 4), 0.0);   // more partners than rounds
  EXPECT_DOUBLE_EQ(node_coverage_probability(4, 10, 4), 0.0);  // more partners than nodes
  EXPECT_NEAR(node_coverage_probability(4, 40, 3),
              1.0 - 3 * std::pow(2.0 / 3, 40) + 3 * std::pow(1.0 / 3, 40),
              1e-12);  // inclusion-exclusion over the 3 partners
}

/// Simulated frequencies of random_pairs agree with the closed forms. Each (n, K) runs `trials`
/// seeds; the link frequency averages over every pair of nodes, the node frequency over every
/// node. A trial's average lies in [0, 1] with mean p, so its variance is at most p(1-p) and the
/// standard error of the frequency at most sqrt(p(1-p)/trials): the tolerance is 4 of those.
TEST(Split, CoverageProbabilitiesAgreeWithSimulatedSampling) {
  struct Case {
    int nodes, rounds, min_partners, trials;
  };
  auto tolerance = [](double p, int trials) { return 4 * std::sqrt(p * (1 - p) / trials); };
  for (const Case c : {Case{8, 4, 3, 10000}, Case{9, 3, 2, 10000}, Case{16, 8, 6, 4000},
                       Case{64, 8, 8, 4000}, Case{65, 16, 15, 2000}}) {
    SCOPED_TRACE(::testing::Message() << "n=" << c.nodes << " K=" << c.rounds);
    const auto n = static_cast<std::size_t>(c.nodes);
    long long links_seen = 0, nodes_covered = 0;
    for (int t = 0; t < c.trials; ++t) {
      std::vector<std::vector<char>> met(n, std::vector<char>(n, 0));
      for (const Pairs& round :
           random_pairs(c.nodes, c.rounds, 0x5eedULL + static_cast<std::uint64_t>(t))) {
        for (const auto& [a, b] : round) {
          met[static_cast<std::size_t>(a)][static_cast<std::size_t>(b)] = 1;
          met[static_cast<std::size_t>(b)][static_cast<std::size_t>(a)] = 1;
        }
      }
      for (std::size_t a = 0; a < n; ++a) {
        int partners = 0;
        for (std::size_t b = 0; b < n; ++b) {
          partners += met[a][b];
          if (b > a) links_seen += met[a][b];
        }
        nodes_covered += partners >= c.min_partners;
      }
    }
    const double links = static_cast<double>(c.trials) * c.nodes * (c.nodes - 1) / 2;
    const double nodes = static_cast<double>(c.trials) * c.nodes;
    const double link = link_coverage_probability(c.nodes, c.rounds);
    const double node = node_coverage_probability(c.nodes, c.rounds, c.min_partners);
    EXPECT_NEAR(static_cast<double>(links_seen) / links, link, tolerance(link, c.trials));
    EXPECT_NEAR(static_cast<double>(nodes_covered) / nodes, node, tolerance(node, c.trials));
  }
}

}  // namespace
}  // namespace collbench
