// Slow hosts and links (collbench/report/suspects.h): synthetic pair tournaments with one bad
// host or one bad link, noise alone over many seeded sets, straggler rows, the --suspects output
// and the report's section.
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <set>

#include "collbench/context.h"
#include "collbench/report/report.h"
#include "collbench/report/suspects.h"
#include "collbench/text.h"
#include "collbench/topology.h"
#include "render/suspects_section.h"
#include "report_test_util.h"

namespace collbench::report {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

std::string host_name(int i) { return fmt::format("node-{:02}", i); }

constexpr int kRanksPerHost = 2;

struct PairSpec {
  int hosts = 4;
  int bad_host = -1;
  int link_a = -1, link_b = -1;  ///< a bad link, when both are set
  double slow = 0.5;             ///< busbw factor of a bad pair
  double noise = 0;              ///< sigma of the lognormal noise per row
  double pair_noise = 0;         ///< ... and per pair and repeat (shared by the pair's rows)
  unsigned seed = 1;
  int repeats = 1;
  std::vector<std::uint64_t> sizes{1 << 20, 16 << 20, 256 << 20};
  SplitMode mode = SplitMode::kPairs;
  std::vector<Placement> placements{Placement::kOutOfPlace};
  /// Each host's leaf switch (empty: one flat network), and the busbw factor of pairs whose hosts
  /// hang from different leaves (their traffic crosses the uplinks).
  std::vector<int> leaf;
  double cross = 1;
  int slow_uplink = -1;  ///< a leaf whose uplink is slow: pairs with one host on it run at `slow`
};

// Rounds of a round-robin tournament (the circle method; with an odd count one host sits out
// each round).
std::vector<std::vector<std::pair<int, int>>> tournament(int n) {
  const int m = n % 2 ? n + 1 : n;
  std::vector<int> order(m);
  for (int i = 0; i < m; ++i) order[i] = i;
  std::vector<std::vector<std::pair<int, int>>> rounds;
  for (int r = 0; r < m - 1; ++r) {
    std::vector<std::pair<int, int>> round;
    for (int i = 0; i < m / 2; ++i) {
      const int a = order[i], b = order[m - 1 - i];
      if (a < n && b < n) round.emplace_back(std::min(a, b), std::max(a, b));
    }
    rounds.push_back(round);
    std::rotate(order.begin() + 1, order.end() - 1, order.end());
  }
  return rounds;
}

ReadRow pair_row(const PairSpec& s, int repeat, int round, int index, int a, int b,
                 std::uint64_t bytes, double busbw, std::mt19937& rng) {
  ReadRow row;
  row.run_id = Name(fmt::format("pairs-{}", repeat));
  row.test = Name("all_reduce");
  row.backend = Name("nccl");
  row.dtype = DType::kFloat;
  row.op = ReduceOp::kSum;
  row.bytes = bytes;
  row.count = bytes / 4;
  row.nranks = s.hosts * kRanksPerHost;
  row.nodes = s.hosts;
  row.iterations = 20;
  row.busbw_gbps = busbw;
  row.algbw_gbps = busbw / 1.5;
  const double t = static_cast<double>(bytes) * 1.5 / (busbw * 1e3);
  RowTimes& times = row.time_us.emplace();
  times.reported = times.slowest = t;
  times.mean = t / 1.02;
  times.fastest = t / 1.04;
  RowGroup g;
  g.mode = s.mode;
  g.round = round;
  g.index = index;
  g.hosts = {Name(host_name(a)), Name(host_name(b))};
  for (int h : {a, b}) {
    for (int k = 0; k < kRanksPerHost; ++k) g.ranks.push_back(h * kRanksPerHost + k);
  }
  const int slowest =
      g.ranks[std::uniform_int_distribution<std::size_t>(0, g.ranks.size() - 1)(rng)];
  row.slowest_rank = slowest;
  row.slowest_host = Name(host_name(slowest / kRanksPerHost));
  row.group = std::move(g);
  return row;
}

ResultSet pair_set(const PairSpec& s) {
  std::mt19937 rng(s.seed);
  std::normal_distribution<double> noise(0, 1);
  ResultSet set;
  const auto rounds = tournament(s.hosts);
  for (int repeat = 0; repeat < s.repeats; ++repeat) {
    for (std::size_t r = 0; r < rounds.size(); ++r) {
      for (std::size_t i = 0; i < rounds[r].size(); ++i) {
        const auto [a, b] = rounds[r][i];
        const bool bad = a == s.bad_host || b == s.bad_host ||
                         (std::min(s.link_a, s.link_b) == a && std::max(s.link_a, s.link_b) == b);
        const double pair_factor =
            (s.pair_noise > 0 ? std::exp(s.pair_noise * noise(rng)) : 1) *
            (!s.leaf.empty() && s.leaf[a] != s.leaf[b] ? s.cross : 1) *
            (s.slow_uplink >= 0 && (s.leaf[a] == s.slow_uplink) != (s.leaf[b] == s.slow_uplink)
                 ? s.slow
                 : 1);
        for (auto bytes : s.sizes) {
          for (Placement placement : s.placements) {
            // Bandwidth grows with size; the analysis must not care.
            const double base = 40 + 10 * std::log2(static_cast<double>(bytes) / (1 << 20));
            const double busbw =
                base * (bad ? s.slow : 1) * pair_factor * std::exp(s.noise * noise(rng));
            set.rows.push_back(pair_row(s, repeat, static_cast<int>(r), static_cast<int>(i), a, b,
                                        bytes, busbw, rng));
            set.rows.back().placement = placement;
          }
        }
      }
    }
  }
  return set;
}

std::vector<std::string> suspect_names(const SuspectReport& report) {
  std::vector<std::string> names;
  for (const auto& s : report.suspects) names.push_back(s.host.str());
  return names;
}

TEST(Suspects, TournamentCoversEveryPairOnce) {
  for (int n : {4, 5, 6, 7}) {
    std::set<std::pair<int, int>> seen;
    for (const auto& round : tournament(n)) {
      for (auto p : round) EXPECT_TRUE(seen.insert(p).second) << n;
    }
    EXPECT_EQ(seen.size(), static_cast<std::size_t>(n * (n - 1) / 2)) << n;
  }
}

TEST(Suspects, OneBadHostIsNamedAloneForFourFiveAndSixHosts) {
  for (int n : {4, 5, 6}) {
    for (unsigned seed = 1; seed <= 5; ++seed) {
      PairSpec s;
      s.hosts = n;
      s.bad_host = static_cast<int>(seed) % n;
      s.noise = 0.05;
      s.seed = seed;
      const SuspectReport report = find_suspects(pair_set(s));
      EXPECT_EQ(suspect_names(report), std::vector<std::string>{host_name(s.bad_host)})
          << "N=" << n << " seed " << seed;
      ASSERT_FALSE(report.suspects.empty());
      EXPECT_EQ(report.suspects[0].evidence, Evidence::kPairs);
      EXPECT_NE(report.suspects[0].reason.find("pair evidence"), std::string::npos);
      EXPECT_TRUE(report.links.empty()) << "N=" << n << " seed " << seed;
      EXPECT_EQ(report.hosts.size(), static_cast<std::size_t>(n));
      EXPECT_EQ(report.pairs.size(), static_cast<std::size_t>(n * (n - 1) / 2));
    }
  }
}

TEST(Suspects, AMildlySlowHostIsNamedToo) {
  PairSpec s;
  s.hosts = 6;
  s.bad_host = 2;
  s.slow = 0.8;
  s.noise = 0.03;
  s.repeats = 2;
  EXPECT_EQ(suspect_names(find_suspects(pair_set(s))), std::vector<std::string>{host_name(2)});
}

TEST(Suspects, OneBadLinkIsNamedAsTheLinkNeverAsAHost) {
  for (int n : {4, 6}) {
    for (unsigned seed = 1; seed <= 5; ++seed) {
      PairSpec s;
      s.hosts = n;
      s.link_a = static_cast<int>(seed) % n;
      s.link_b = (s.link_a + 1 + static_cast<int>(seed) % (n - 1)) % n;
      s.noise = 0.05;
      s.seed = seed;
      const SuspectReport report = find_suspects(pair_set(s));
      EXPECT_TRUE(report.suspects.empty())
          << "N=" << n << " seed " << seed << ": "
          << fmt::format("{}", fmt::join(suspect_names(report), ","));
      ASSERT_EQ(report.links.size(), 1u) << "N=" << n << " seed " << seed;
      const auto lo = std::min(s.link_a, s.link_b), hi = std::max(s.link_a, s.link_b);
      EXPECT_EQ(report.links[0].a.str(), host_name(lo));
      EXPECT_EQ(report.links[0].b.str(), host_name(hi));
      EXPECT_NEAR(report.links[0].ratio, 0.5, 0.1);
    }
  }
}

TEST(Suspects, OneSlowRowOfAPairIsNotASlowLink) {
  // Eight hosts, one size, both placements (one round each pair, as a tournament measures it):
  // one row of node-00 <-> node-02 four times slow, as a busy moment makes it, the row beside
  // it as fast as the others. A slow link is slow in most of its rows; this is not named.
  PairSpec s;
  s.hosts = 8;
  s.sizes = {256 << 10};
  s.placements = {Placement::kOutOfPlace, Placement::kInPlace};
  s.noise = 0.03;
  ResultSet set = pair_set(s);
  auto is_pair = [](const ReadRow& row, int a, int b) {
    return row.group->hosts[0].str() == host_name(std::min(a, b)) &&
           row.group->hosts[1].str() == host_name(std::max(a, b));
  };
  for (auto& row : set.rows) {
    if (is_pair(row, 0, 2) && row.placement == Placement::kInPlace) *row.busbw_gbps /= 4;
  }
  SuspectReport report = find_suspects(set);
  EXPECT_TRUE(report.links.empty()) << suspects_text(report);
  EXPECT_TRUE(report.suspects.empty()) << suspects_text(report);
  // Both rows slow: the link.
  for (auto& row : set.rows) {
    if (is_pair(row, 0, 2) && row.placement == Placement::kOutOfPlace) *row.busbw_gbps /= 4;
  }
  report = find_suspects(set);
  ASSERT_EQ(report.links.size(), 1u) << suspects_text(report);
  EXPECT_EQ(report.links[0].a.str(), host_name(0));
  EXPECT_EQ(report.links[0].b.str(), host_name(2));
}

TEST(Suspects, ABadHostAndABadLinkAreBothNamed) {
  PairSpec s;
  s.hosts = 6;
  s.bad_host = 5;
  s.link_a = 0;
  s.link_b = 1;
  const SuspectReport report = find_suspects(pair_set(s));
  EXPECT_EQ(suspect_names(report), std::vector<std::string>{host_name(5)});
  ASSERT_EQ(report.links.size(), 1u);
  EXPECT_EQ(suspects_text(report),
            "node-05\n# slow link: node-00 <-> node-01: 50% of the median pair\n");
}

// Noise alone: pair rows with ±10% lognormal noise must name nothing. The false-positive rate
// is measured over many seeded sets of 4 to 8 hosts and printed.
double false_positive_rate(int sets, std::vector<std::uint64_t> sizes, int repeats) {
  int positives = 0;
  for (int k = 0; k < sets; ++k) {
    PairSpec s;
    s.hosts = 4 + k % 5;
    s.noise = 0.10;
    s.seed = 1000 + static_cast<unsigned>(k);
    s.sizes = sizes;
    s.repeats = repeats;
    const SuspectReport report = find_suspects(pair_set(s));
    positives += !report.suspects.empty() || !report.links.empty();
  }
  return static_cast<double>(positives) / sets;
}

TEST(Suspects, NoiseAloneNamesNothing) {
  constexpr int kSets = 1000;
  const double three_sizes = false_positive_rate(kSets, {1 << 20, 16 << 20, 256 << 20}, 1);
  const double one_size = false_positive_rate(kSets, {256 << 20}, 1);
  std::cout << fmt::format(
      "false-positive rate over {} seeded sets (N = 4..8, 10% lognormal noise): {:.1f}% with 3 "
      "sizes, {:.1f}% with 1 size\n",
      kSets, 100 * three_sizes, 100 * one_size);
  RecordProperty("false_positive_rate_3_sizes", fmt::format("{}", three_sizes));
  RecordProperty("false_positive_rate_1_size", fmt::format("{}", one_size));
  EXPECT_LE(three_sizes, 0.01);
  EXPECT_LE(one_size, 0.015);
}

// The other side of the rule: a bad host or a bad link at half speed is found, as itself and
// nothing else, at 5% noise in every set and at the 10% noise above in most.
TEST(Suspects, BadHostsAndLinksAreFoundThroughNoise) {
  constexpr int kSets = 200;
  for (double noise : {0.05, 0.10}) {
    int hosts_found = 0, links_found = 0;
    for (int k = 0; k < kSets; ++k) {
      PairSpec s;
      s.hosts = 4 + k % 5;
      s.noise = noise;
      s.seed = 5000 + static_cast<unsigned>(k);
      s.bad_host = k % s.hosts;
      const SuspectReport host = find_suspects(pair_set(s));
      hosts_found += suspect_names(host) == std::vector<std::string>{host_name(s.bad_host)} &&
                     host.links.empty();
      s.bad_host = -1;
      s.link_a = k % s.hosts;
      s.link_b = (k + 1) % s.hosts;
      const SuspectReport link = find_suspects(pair_set(s));
      links_found += link.suspects.empty() && link.links.size() == 1;
    }
    std::cout << fmt::format(
        "found at {:.0f}% noise over {} sets (N = 4..8, 3 sizes): the bad host alone in "
        "{:.1f}%, the bad link alone in {:.1f}%\n",
        100 * noise, kSets, 100.0 * hosts_found / kSets, 100.0 * links_found / kSets);
    EXPECT_GE(hosts_found, kSets * (noise < 0.1 ? 99 : 90) / 100) << noise;
    EXPECT_GE(links_found, kSets * (noise < 0.1 ? 99 : 75) / 100) << noise;
  }
}

TEST(Suspects, ManyHostsShareOneReferenceAndStillNameTheBadOnes) {
  // 70 hosts: 2415 pairs, past the exact references.
  PairSpec s;
  s.hosts = 70;
  s.bad_host = 12;
  s.link_a = 3;
  s.link_b = 40;
  s.noise = 0.05;
  const SuspectReport report = find_suspects(pair_set(s));
  EXPECT_EQ(report.pairs.size(), 2415u);
  EXPECT_EQ(suspect_names(report), std::vector<std::string>{host_name(12)});
  ASSERT_EQ(report.links.size(), 1u);
  EXPECT_EQ(report.links[0].a.str(), host_name(3));
  EXPECT_EQ(report.links[0].b.str(), host_name(40));
  ASSERT_NE(report.pair(Name(host_name(40)), Name(host_name(3))), nullptr);
  EXPECT_EQ(report.pair(Name(host_name(40)), Name(host_name(3)))->a.str(), host_name(3));
  EXPECT_EQ(report.pair(Name(host_name(40)), Name("elsewhere")), nullptr);
}

TEST(Suspects, ThreeHostsOrFewerNameNothingFromPairs) {
  // With three hosts a host's other pairs are one pair: too few to know what normal is.
  PairSpec s;
  s.hosts = 3;
  s.bad_host = 0;
  const SuspectReport report = find_suspects(pair_set(s));
  EXPECT_TRUE(report.suspects.empty());
  EXPECT_TRUE(report.links.empty());
  EXPECT_EQ(report.pairs.size(), 3u);
}

TEST(Suspects, SmallSizesAreLeftOutWhenLargeOnesWereMeasured) {
  PairSpec s;
  s.hosts = 5;
  s.bad_host = 1;
  s.sizes = {8, 1024, 64 << 10, 4 << 20};
  ResultSet set = pair_set(s);
  // The bad host's latency is fine: make its small-size pairs as fast as the others.
  for (auto& row : set.rows) {
    if (row.bytes < (1 << 20)) row.busbw_gbps = 1.0;
  }
  EXPECT_EQ(suspect_names(find_suspects(set)), std::vector<std::string>{host_name(1)});
}

// --- Real tournaments (tests/report/fixtures/suspects).
// -------------------------------------------

ResultSet real_tournament(const std::string& name) {
  return read_results({(fs::path(COLLBENCH_REPORT_FIXTURES) / "suspects" / name).string()});
}

// A hunt's tournament on a loaded 2-core machine: the shaped link node2-node3 ran at a quarter
// of every other pair, whose two ends were each fine with their other partners.
TEST(Suspects, RealTournamentWithASlowLinkNamesTheLinkAndNoHost) {
  const ResultSet set = real_tournament("slow-link-4-hosts-loaded.jsonl");
  ASSERT_EQ(set.rows.size(), 12u);
  const SuspectReport report = find_suspects(set);
  EXPECT_TRUE(report.suspects.empty()) << suspects_text(report);
  ASSERT_EQ(report.links.size(), 1u) << suspects_text(report);
  EXPECT_EQ(report.links[0].a.str(), "node2");
  EXPECT_EQ(report.links[0].b.str(), "node3");
  EXPECT_LT(report.links[0].ratio, 0.3);
  EXPECT_EQ(suspects_text(report).rfind("# slow link: node2 <-> node3: ", 0), 0u);
}

// A campaign's tournament with one host shaped and nothing else capped: every pair with node3
// 20 to 40 times slower than every other. Half of the 6 pairs are slow.
TEST(Suspects, RealTournamentWithASlowHostNamesTheHostFirst) {
  const SuspectReport report = find_suspects(real_tournament("slow-host-4-hosts-uncapped.jsonl"));
  ASSERT_FALSE(report.suspects.empty());
  EXPECT_EQ(report.suspects[0].host.str(), "node3");
  EXPECT_EQ(report.suspects[0].evidence, Evidence::kPairs);
  EXPECT_EQ(suspects_text(report).rfind("node3\n", 0), 0u) << suspects_text(report);
  EXPECT_TRUE(report.links.empty()) << suspects_text(report);
}

// What a loaded machine does to a tournament when nothing caps the hosts: good pairs differ by
// up to several times with the CPU time each gets (lognormal noise with sigma 0.4 per pair and
// 0.2 per row, out-of-place and in-place rows at one size, as a hunt measures), and a slow host
// or link is 20 times slower. Each is still named as itself at 4 to 8 hosts, and the noise alone
// names nothing.
TEST(Suspects, ALargeFaultIsNamedThroughTheNoiseOfALoadedMachine) {
  constexpr int kSets = 200;
  int hosts_found = 0, links_found = 0, clean = 0;
  for (int k = 0; k < kSets; ++k) {
    PairSpec s;
    s.hosts = 4 + k % 5;
    s.noise = 0.2;
    s.pair_noise = 0.4;
    s.slow = 0.05;
    s.sizes = {1 << 20};
    s.placements = {Placement::kOutOfPlace, Placement::kInPlace};
    s.seed = 9000 + static_cast<unsigned>(k);
    s.bad_host = k % s.hosts;
    const SuspectReport host = find_suspects(pair_set(s));
    hosts_found += !host.suspects.empty() && host.suspects[0].host.str() == host_name(s.bad_host);
    s.bad_host = -1;
    s.link_a = k % s.hosts;
    s.link_b = (k + 2) % s.hosts;
    const SuspectReport link = find_suspects(pair_set(s));
    links_found += link.suspects.empty() && link.links.size() == 1;
    s.link_a = s.link_b = -1;
    const SuspectReport none = find_suspects(pair_set(s));
    clean += none.suspects.empty() && none.links.empty();
  }
  std::cout << fmt::format(
      "a 20x fault through 40% + 20% noise over {} sets (N = 4..8, 1 size): the bad host first in "
      "{:.1f}%, the bad link alone in {:.1f}%, nothing named without a fault in {:.1f}%\n",
      kSets, 100.0 * hosts_found / kSets, 100.0 * links_found / kSets, 100.0 * clean / kSets);
  EXPECT_GE(hosts_found, kSets * 95 / 100);
  EXPECT_GE(links_found, kSets * 90 / 100);
  EXPECT_GE(clean, kSets * 99 / 100);
}

// --- Stragglers. --------------------------------------------------------------------------------

// Ordinary rows of one 4-host job (2 ranks per host), with its context record.
ResultSet straggler_set(int rows, double bad_share, int bad_host, double bad_excess,
                        double other_excess, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> unit(0, 1);
  ResultSet set;
  const Name run("job-1");
  ReadContext context;
  context.context.run_id = "job-1";
  for (int h = 0; h < 4; ++h) {
    HostRecord host;
    host.name = host_name(h);
    host.ranks = {h * kRanksPerHost, h * kRanksPerHost + 1};
    context.context.hosts.push_back(host);
  }
  set.contexts.emplace(run, context);
  for (int i = 0; i < rows; ++i) {
    ReadRow row;
    row.run_id = run;
    row.test = Name("all_reduce");
    row.backend = Name("nccl");
    row.bytes = std::uint64_t{1} << (10 + i % 10);
    row.nranks = 4 * kRanksPerHost;
    row.nodes = 4;
    row.busbw_gbps = 10;
    const bool bad = unit(rng) < bad_share;
    const int rank = bad ? bad_host * kRanksPerHost + 1
                         : static_cast<int>(unit(rng) * 4 * kRanksPerHost) % (4 * kRanksPerHost);
    const double excess = rank / kRanksPerHost == bad_host && bad ? bad_excess : other_excess;
    RowTimes& t = row.time_us.emplace();
    t.mean = 100;
    t.reported = t.slowest = 100 * (1 + excess);
    t.fastest = 95;
    row.slowest_rank = rank;
    row.slowest_host = Name(host_name(rank / kRanksPerHost));
    set.rows.push_back(row);
  }
  return set;
}

TEST(Suspects, AStragglerHostInOrdinaryRowsIsNamed) {
  const SuspectReport report = find_suspects(straggler_set(60, 0.7, 2, 0.15, 0.02, 7));
  ASSERT_EQ(suspect_names(report), std::vector<std::string>{host_name(2)});
  EXPECT_EQ(report.suspects[0].evidence, Evidence::kStragglers);
  EXPECT_NE(report.suspects[0].reason.find("straggler evidence"), std::string::npos);
  EXPECT_EQ(report.group_rows, 0u);
  EXPECT_TRUE(report.worth_showing());
  ASSERT_FALSE(report.stragglers.empty());
  const Straggler& top = report.stragglers[0];
  EXPECT_EQ(top.host.str(), host_name(2));
  EXPECT_EQ(top.rank, -1);
  EXPECT_EQ(top.rows, 60u);
  EXPECT_DOUBLE_EQ(top.chance, 0.25);
  EXPECT_NEAR(top.median_excess, 0.15, 1e-9);
  EXPECT_TRUE(top.named);
  // Its rank 5 comes right below it.
  ASSERT_GT(report.stragglers.size(), 1u);
  EXPECT_EQ(report.stragglers[1].rank, 5);
  EXPECT_EQ(report.stragglers[1].rows, 60u);
  EXPECT_DOUBLE_EQ(report.stragglers[1].chance, 1.0 / 8);
}

TEST(Suspects, StragglersByChanceOrByATinyMarginAreNotNamed) {
  // Uniformly random slowest ranks, each late by 15%: chance, not a host.
  for (unsigned seed = 1; seed <= 50; ++seed) {
    const SuspectReport report = find_suspects(straggler_set(80, 0, 0, 0.15, 0.15, seed));
    EXPECT_TRUE(report.suspects.empty()) << seed;
    EXPECT_FALSE(report.worth_showing()) << seed;
  }
  // Always the same host, but by 1%: ranks of any job finish that far apart.
  const SuspectReport tiny = find_suspects(straggler_set(60, 1.0, 1, 0.01, 0.01, 3));
  EXPECT_TRUE(tiny.suspects.empty());
  ASSERT_FALSE(tiny.stragglers.empty());
  EXPECT_EQ(tiny.stragglers[0].slowest, 60u);
  EXPECT_FALSE(tiny.stragglers[0].named);
  // Too few rows to tell.
  EXPECT_TRUE(find_suspects(straggler_set(5, 1.0, 1, 0.5, 0.5, 3)).suspects.empty());
}

TEST(Suspects, AJobOfAnyRankCountIsNotSpeltOut) {
  // nranks comes from the input: two billion ranks must cost nothing.
  ResultSet set = straggler_set(40, 0.8, 1, 0.2, 0.02, 5);
  for (auto& row : set.rows) row.nranks = 2'000'000'000;
  const SuspectReport report = find_suspects(set);
  EXPECT_EQ(suspect_names(report), std::vector<std::string>{host_name(1)});
}

TEST(Suspects, StragglersInPairRowsCountAgainstTheirPair) {
  PairSpec s;
  s.hosts = 6;
  s.repeats = 4;
  ResultSet set = pair_set(s);
  // node-03 is the slowest of every pair it is in, by 20%.
  for (auto& row : set.rows) {
    if (row.group->hosts[0] == host_name(3) || row.group->hosts[1] == host_name(3)) {
      row.slowest_rank = 3 * kRanksPerHost;
      row.slowest_host = Name(host_name(3));
      row.time_us->slowest = row.time_us->mean * 1.2;
    }
  }
  const SuspectReport report = find_suspects(set);
  ASSERT_EQ(suspect_names(report), std::vector<std::string>{host_name(3)});
  EXPECT_EQ(report.suspects[0].evidence, Evidence::kStragglers);
  EXPECT_DOUBLE_EQ(report.stragglers[0].chance, 0.5);
}

TEST(Suspects, BinomialTail) {
  EXPECT_DOUBLE_EQ(binomial_tail(0, 10, 0.3), 1);
  EXPECT_NEAR(binomial_tail(3, 3, 0.5), 0.125, 1e-12);
  EXPECT_NEAR(binomial_tail(2, 3, 0.5), 0.5, 1e-12);
  EXPECT_NEAR(binomial_tail(60, 60, 0.25), std::pow(0.25, 60), 1e-40);
  EXPECT_DOUBLE_EQ(binomial_tail(4, 3, 0.5), 0);
}

// --- Output. ------------------------------------------------------------------------------------

TEST(Suspects, TextIsHostsThenLinkCommentsAndNothingWhenClean) {
  PairSpec host;
  host.hosts = 5;
  host.bad_host = 4;
  EXPECT_EQ(suspects_text(find_suspects(pair_set(host))), "node-04\n");
  PairSpec link;
  link.hosts = 4;
  link.link_a = 1;
  link.link_b = 3;
  EXPECT_EQ(suspects_text(find_suspects(pair_set(link))),
            "# slow link: node-01 <-> node-03: 50% of the median pair\n");
  PairSpec clean;
  clean.hosts = 6;
  EXPECT_EQ(suspects_text(find_suspects(pair_set(clean))), "");
}

TEST(Suspects, AHostNameThatIsNoHostnameStaysOutOfTheList) {
  PairSpec s;
  s.hosts = 4;
  s.bad_host = 0;
  ResultSet set = pair_set(s);
  for (auto& row : set.rows) {
    for (auto& h : row.group->hosts) {
      if (h == host_name(0)) h = Name("evil\nnode,x");
    }
  }
  EXPECT_EQ(suspects_text(find_suspects(set)),
            "# slow host with a name that is not a hostname: evil\\x0anode,x\n");
}

// The report's section, from result files as collbench writes them.
std::string jsonl(const ResultSet& set) {
  std::string text;
  for (const auto& row : set.rows) text += to_json(row).dump() + "\n";
  return text;
}

TEST(Suspects, ReportSectionOnlyWithGroupRows) {
  PairSpec s;
  s.hosts = 5;
  s.bad_host = 3;
  TempDir dir;
  dir.write("in/pairs.jsonl", jsonl(pair_set(s)));
  ReportOptions o;
  o.inputs = {(dir.path() / "in").string()};
  o.output = (dir.path() / "out").string();
  ASSERT_EQ(run(o, nullptr, nullptr), 0);
  const std::string html = testing::read_file(dir.path() / "out" / "index.html");
  EXPECT_NE(html.find("<section id=\"suspects\">"), std::string::npos);
  EXPECT_NE(html.find("<a href=\"#suspects\">"), std::string::npos);
  EXPECT_NE(html.find("id=\"fig-suspects-heatmap\""), std::string::npos);
  EXPECT_NE(html.find("node-03</strong> (slow pairs)"), std::string::npos);
  // 5 hosts: 20 coloured cells, 5 blank diagonal ones, names on both axes.
  const auto section = html.substr(html.find("<section id=\"suspects\">"));
  auto count = [&](const std::string& what) {
    std::size_t n = 0;
    for (auto p = section.find(what); p != std::string::npos; p = section.find(what, p + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("<title>node-"), 20u);
  EXPECT_EQ(count("fill=\"none\" stroke=\"#c8ccd2\""), 5u);
  EXPECT_EQ(count(">node-03</text>"), 2u);
  EXPECT_NE(section.find("suspects-scale"), std::string::npos);  // the legend
  const std::string md = testing::read_file(dir.path() / "out" / "summary.md");
  EXPECT_NE(md.find("## Slow nodes and links"), std::string::npos);
  EXPECT_NE(md.find("- **node-03** (slow pairs)"), std::string::npos);
  EXPECT_NE(md.find("| Host | node-00 | node-01 |"), std::string::npos);
  EXPECT_NE(md.find("### Stragglers"), std::string::npos);

  // Ordinary rows without a straggler: no section at all.
  TempDir plain;
  testing::RunSpec spec;
  plain.write("in/plain.jsonl", testing::run_text(spec));
  o.inputs = {(plain.path() / "in").string()};
  o.output = (plain.path() / "out").string();
  ASSERT_EQ(run(o, nullptr, nullptr), 0);
  EXPECT_EQ(testing::read_file(plain.path() / "out" / "index.html").find("suspects"),
            std::string::npos);
  EXPECT_EQ(testing::read_file(plain.path() / "out" / "summary.md").find("Slow nodes"),
            std::string::npos);
}

TEST(Suspects, SuspectsModePrintsOnlyTheListAndWritesNoReportWithoutOutput) {
  PairSpec s;
  s.hosts = 6;
  s.bad_host = 5;
  s.link_a = 0;
  s.link_b = 1;
  TempDir dir;
  dir.write("in/pairs.jsonl", jsonl(pair_set(s)));
  ReportOptions o;
  o.inputs = {(dir.path() / "in").string()};
  o.suspects = true;
  const auto cwd = fs::current_path();
  fs::current_path(dir.path());
  std::FILE* out = std::tmpfile();
  std::FILE* err = std::tmpfile();
  ASSERT_TRUE(out && err);
  const int code = run(o, out, err);
  fs::current_path(cwd);
  EXPECT_EQ(code, 0);
  auto text_of = [](std::FILE* f) {
    std::string text;
    std::rewind(f);
    char buffer[4096];
    for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, f)) > 0;) text.append(buffer, n);
    std::fclose(f);
    return text;
  };
  EXPECT_EQ(text_of(out), "node-05\n# slow link: node-00 <-> node-01: 50% of the median pair\n");
  EXPECT_NE(text_of(err).find("slow host node-05: pair evidence"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir.path() / "report"));

  // With -o the report is written as well.
  o.output = (dir.path() / "out").string();
  EXPECT_EQ(run(o, nullptr, nullptr), 0);
  EXPECT_TRUE(fs::exists(dir.path() / "out" / "index.html"));
}

// Slurm's description of hosts on the leaves `leaf` names, all under one spine.
NetworkTopology leaves(const std::vector<int>& leaf) {
  std::map<int, std::vector<std::string>> hosts;
  for (std::size_t h = 0; h < leaf.size(); ++h)
    hosts[leaf[h]].push_back(host_name(static_cast<int>(h)));
  std::string text;
  std::vector<std::string> names;
  for (const auto& [l, list] : hosts) {
    names.push_back(fmt::format("leaf{}", l));
    text += fmt::format("SwitchName=leaf{} Nodes={}\n", l, fmt::join(list, ","));
  }
  text += fmt::format("SwitchName=spine Switches={}\n", fmt::join(names, ","));
  return read_slurm_topology(text, "topology.conf");
}

TEST(Placement, CrossingTheSpineIsCostedPerLevelAndPerSwitch) {
  PairSpec s;
  s.hosts = 8;
  s.leaf = {0, 0, 0, 0, 1, 1, 1, 1};
  s.cross = 0.6;
  s.noise = 0.03;
  const PlacementVerdict v =
      placement_verdict(find_suspects(pair_set(s)), leaves({0, 0, 0, 0, 1, 1, 1, 1}));
  EXPECT_TRUE(v.missing_hosts.empty());
  EXPECT_EQ(v.pairs, 28);
  ASSERT_EQ(v.levels.size(), 2u);
  EXPECT_EQ(v.reference_level, 1);
  EXPECT_EQ(v.levels[0].pairs, 12);
  EXPECT_EQ(v.levels[1].pairs, 16);
  EXPECT_NEAR(v.levels[1].relative, 0.6, 0.05);
  // The pairs' time at the smallest size (1 MiB here, bandwidth-bound): 1 / 0.6 as long.
  EXPECT_GT(v.levels[0].latency_us, 0);
  EXPECT_NEAR(v.levels[1].latency_relative, 1 / 0.6, 0.15);
  ASSERT_EQ(v.switches.size(), 1u);
  EXPECT_EQ(v.switches[0].node, "spine");
  // The chart: two bars a level, against the same-leaf pairs' 100%.
  const std::string svg = detail::placement_chart_svg(v);
  EXPECT_NE(svg.find("aria-label=\"pair bandwidth and time by where pairs meet\""),
            std::string::npos);
  EXPECT_NE(svg.find(">60%</text>"), std::string::npos) << svg;
  EXPECT_NE(svg.find("100%: pairs on the same leaf switch (level 1)"), std::string::npos);
  // One spine: its level's line says it all.
  EXPECT_EQ(v.sentences(), std::vector<std::string>{
                               "pairs meeting at a level-2 switch run at 60% of pairs on the same "
                               "leaf switch (level 1) (median of 16 pairs against 12)"});

  // Two spines under a top switch: each spine of level 2 gets its own line.
  std::string text;
  for (int l = 0; l < 4; ++l) {
    text +=
        fmt::format("SwitchName=leaf{} Nodes={},{}\n", l, host_name(2 * l), host_name(2 * l + 1));
  }
  text +=
      "SwitchName=spineA Switches=leaf0,leaf1\nSwitchName=spineB Switches=leaf2,leaf3\n"
      "SwitchName=top Switches=spineA,spineB\n";
  s.leaf = {0, 0, 1, 1, 2, 2, 3, 3};
  const PlacementVerdict tree =
      placement_verdict(find_suspects(pair_set(s)), read_slurm_topology(text, "topology.conf"));
  const auto lines = tree.sentences();
  ASSERT_EQ(lines.size(), 4u) << fmt::format("{}", fmt::join(lines, "\n"));
  EXPECT_NE(lines[0].find("pairs meeting at a level-2 switch run at"), std::string::npos);
  EXPECT_NE(lines[1].find("pairs meeting at a level-3 switch run at"), std::string::npos);
  EXPECT_NE(lines[2].find("pairs meeting at spineA (level 2) run at"), std::string::npos);
  EXPECT_NE(lines[3].find("pairs meeting at spineB (level 2) run at"), std::string::npos);
}

TEST(Placement, AFlatNetworkCostsNothingAndHostsOutsideTheTopologyAreNamed) {
  PairSpec s;
  s.hosts = 8;
  s.noise = 0.03;
  const SuspectReport report = find_suspects(pair_set(s));
  // node-07 is in no switch of the file: its pairs are left out, and it is said.
  const PlacementVerdict v = placement_verdict(report, leaves({0, 0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(v.missing_hosts, std::vector<std::string>{host_name(7)});
  EXPECT_EQ(v.pairs, 21);
  ASSERT_EQ(v.levels.size(), 2u);
  EXPECT_NEAR(v.levels[1].relative, 1.0, 0.06) << "no level costs anything on a flat network";
  const auto lines = v.sentences();
  EXPECT_EQ(lines.back(),
            "not in topology.conf (their pairs are left out, never guessed): " + host_name(7));
}

// What collbench-report prints on stdout for `o` (which must succeed).
std::string printed(const ReportOptions& o) {
  std::FILE* out = std::tmpfile();
  EXPECT_TRUE(out);
  if (!out) return "";
  EXPECT_EQ(run(o, out, nullptr), 0);
  std::string text;
  std::rewind(out);
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, out)) > 0;) text.append(buffer, n);
  std::fclose(out);
  return text;
}

TEST(Placement, SuspectsModePrintsTheVerdictAsCommentLinesAndTheReportShowsIt) {
  PairSpec s;
  s.hosts = 8;
  s.leaf = {0, 0, 0, 0, 1, 1, 1, 1};
  s.cross = 0.6;
  TempDir dir;
  dir.write("in/pairs.jsonl", jsonl(pair_set(s)));
  ReportOptions o;
  o.inputs = {(dir.path() / "in").string()};
  o.suspects = true;
  o.topology = leaves({0, 0, 0, 0, 1, 1, 1, 1});
  o.output = (dir.path() / "out").string();
  const std::string text = printed(o);
  EXPECT_NE(text.find("# placement: pairs meeting at a level-2 switch run at 60% of pairs on the "
                      "same leaf switch (level 1) (median of 16 pairs against 12)\n"),
            std::string::npos)
      << text;
  // No host line: an exclude list built from the output stays empty.
  for (const auto& line : split_nonempty(text, '\n')) EXPECT_EQ(line[0], '#') << line;
  const std::string md = testing::read_file(dir.path() / "out" / "summary.md");
  EXPECT_NE(md.find("## Placement"), std::string::npos);
  EXPECT_NE(md.find("| spine (level 2) | 16 |"), std::string::npos) << md;
  const std::string html = testing::read_file(dir.path() / "out" / "index.html");
  EXPECT_NE(html.find("<section id=\"placement\">"), std::string::npos);
  EXPECT_NE(html.find("pair bandwidth and time by where pairs meet"), std::string::npos);
  EXPECT_NE(md.find("| Relative time |"), std::string::npos) << md;
  EXPECT_NE(html.find("href=\"#placement\""), std::string::npos);
  // The same verdict, typed, in --suspects --json: what a script reads instead of the sentences.
  o.suspects_json = true;
  o.output.clear();
  const SuspectsRecord record = read_suspects_json(printed(o));
  ASSERT_TRUE(record.placement);
  EXPECT_EQ(record.placement->reference_level, 1);
  ASSERT_EQ(record.placement->levels.size(), 2u);
  EXPECT_EQ(record.placement->levels[1].level, 2);
  EXPECT_EQ(record.placement->levels[1].pairs, 16);
  EXPECT_NEAR(record.placement->levels[1].relative, 0.6, 0.05);
  EXPECT_NEAR(record.placement->levels[1].latency_relative, 1 / 0.6, 0.15);
  ASSERT_EQ(record.placement->switches.size(), 1u);
  EXPECT_EQ(record.placement->switches[0].node, "spine");
  EXPECT_TRUE(record.placement->missing_hosts.empty());
  // Without a topology the document has no placement member.
  o.topology.reset();
  EXPECT_EQ(printed(o).find("placement"), std::string::npos);
}

TEST(Placement, EC2sInstancesAreTheHostsTheRunContextsName) {
  // EC2's topology names instances; without a --topology-hosts file the report reads each
  // host's instance id from the run's context (collbench records it from DMI's board asset tag).
  PairSpec s;
  s.hosts = 6;
  s.leaf = {0, 0, 1, 1, 2, 2};
  s.slow_uplink = 1;
  s.slow = 0.1;
  const ResultSet set = pair_set(s);
  RunContext context;
  context.run_id = set.rows.front().run_id.str();
  nlohmann::json instances = nlohmann::json::array();
  for (int h = 0; h < s.hosts; ++h) {
    const std::string id = fmt::format("i-{:017x}", h + 1);
    context.hosts.push_back({host_name(h), {h}, "p5.48xlarge", std::nullopt, id});
    instances.push_back(
        {{"InstanceId", id}, {"NetworkNodes", {"top", "spine", fmt::format("leaf{}", s.leaf[h])}}});
  }
  TempDir dir;
  dir.write("in/pairs.jsonl", to_json(context).dump() + "\n" + jsonl(set));
  dir.write("ec2.json", nlohmann::json{{"Instances", instances}}.dump());
  ReportOptions o;
  o.inputs = {(dir.path() / "in").string()};
  o.suspects = true;
  o.suspects_json = true;
  o.topology = read_topology_file(dir.path() / "ec2.json", std::nullopt);
  const std::string text = printed(o);
  const SuspectsRecord record = read_suspects_json(text);
  EXPECT_TRUE(record.hosts.empty()) << text;
  ASSERT_EQ(record.switches.size(), 1u) << text;
  EXPECT_EQ(record.switches[0].node, "leaf1");
  EXPECT_EQ(record.switches[0].parent, "spine");
}

TEST(Placement, TheHeatmapFollowsTheTreeSoEachSwitchIsABlock) {
  PairSpec s;
  s.hosts = 6;
  s.leaf = {0, 1, 0, 1, 0, 1};  // leaves alternate in the host names' order
  s.cross = 0.6;
  const SuspectReport report = find_suspects(pair_set(s));
  std::string text =
      "SwitchName=leafA Nodes=node-00,node-02,node-04\n"
      "SwitchName=leafB Nodes=node-01,node-03\n"
      "SwitchName=spine Switches=leafA,leafB\n";
  const PlacementVerdict v = placement_verdict(report, read_slurm_topology(text, "t.conf"));
  EXPECT_EQ(v.host_order, (std::vector<std::string>{"node-00", "node-02", "node-04", "node-01",
                                                    "node-03", "node-05"}))
      << "by switch from the top, node-05 (not in the file) last";
  const std::string svg = detail::suspects_heatmap_svg(report, v.host_order);
  EXPECT_LT(svg.find(">node-04</text>"), svg.find(">node-01</text>"));
  EXPECT_LT(svg.find(">node-03</text>"), svg.find(">node-05</text>"));
}

// Eight hosts on three leaves under one spine.
PairSpec three_leaves(unsigned seed, double noise) {
  PairSpec s;
  s.hosts = 8;
  s.leaf = {0, 0, 0, 1, 1, 1, 2, 2};
  s.noise = noise;
  s.seed = seed;
  return s;
}

// The suspects of `s`'s tournament judged on its leaves' tree.
SuspectReport suspects_on_tree(const PairSpec& s) {
  const NetworkTopology t = leaves(s.leaf);
  return find_suspects(pair_set(s), {}, &t);
}

TEST(Placement, ASlowUplinkIsNamedAsTheSwitchAndItsHostsAreNotBadNodes) {
  for (unsigned seed = 1; seed <= 10; ++seed) {
    PairSpec s = three_leaves(seed, 0.05);
    s.slow_uplink = static_cast<int>(seed % 3);
    const SuspectReport report = suspects_on_tree(s);
    EXPECT_TRUE(report.suspects.empty())
        << "seed " << seed << ": " << fmt::format("{}", fmt::join(suspect_names(report), ","));
    EXPECT_TRUE(report.links.empty()) << "seed " << seed;
    ASSERT_EQ(report.switches.size(), 1u) << "seed " << seed;
    EXPECT_EQ(report.switches[0].node, fmt::format("leaf{}", s.slow_uplink)) << "seed " << seed;
    EXPECT_EQ(report.switches[0].parent, "spine");
    EXPECT_TRUE(report.switches[0].alike.empty());
    EXPECT_NEAR(report.switches[0].ratio, 0.5, 0.1);
  }
}

TEST(Placement, TwoLeavesMakeOneFindingForTheirTwoUplinks) {
  PairSpec s;
  s.hosts = 8;
  s.leaf = {0, 0, 0, 0, 1, 1, 1, 1};
  s.slow_uplink = 1;
  s.noise = 0.05;
  const SuspectReport report = suspects_on_tree(s);
  EXPECT_TRUE(report.suspects.empty());
  ASSERT_EQ(report.switches.size(), 1u);
  EXPECT_EQ(report.switches[0].node, "leaf0");
  EXPECT_EQ(report.switches[0].alike, std::vector<std::string>{"leaf1"});
  EXPECT_EQ(suspects_text(report),
            "# slow switch: leaf0 (uplink to spine; or the uplink of leaf1: no pair tells them "
            "apart): " +
                percent_text(report.switches[0].ratio) + " of the pairs that do not cross it\n");
  // --suspects --json carries it for programs (collbench-sweep hunt), and reads back alike.
  const SuspectsRecord back = read_suspects_json(suspects_json(suspects_record(report)));
  ASSERT_EQ(back.switches.size(), 1u);
  EXPECT_EQ(back.switches[0].node, "leaf0");
  EXPECT_EQ(back.switches[0].parent, "spine");
  EXPECT_EQ(back.switches[0].alike, std::vector<std::string>{"leaf1"});
  EXPECT_EQ(back.switches[0].reason, report.switches[0].reason);
  // Without a topology the document is what it always was: no "switches" member.
  EXPECT_EQ(suspects_json(suspects_record(find_suspects(pair_set(s)))).find("switches"),
            std::string::npos);
}

TEST(Placement, ABadHostBehindAHealthyUplinkIsABadNodeAndNoSwitch) {
  for (unsigned seed = 1; seed <= 10; ++seed) {
    PairSpec s = three_leaves(seed, 0.05);
    s.bad_host = static_cast<int>(seed % 8);
    const SuspectReport report = suspects_on_tree(s);
    EXPECT_EQ(suspect_names(report), std::vector<std::string>{host_name(s.bad_host)})
        << "seed " << seed;
    EXPECT_TRUE(report.switches.empty()) << "seed " << seed << ": " << report.switches[0].node;
  }
}

TEST(Placement, NoiseAloneNamesNoSwitch) {
  int named = 0;
  for (unsigned seed = 1; seed <= 200; ++seed) {
    named += suspects_on_tree(three_leaves(seed, 0.10)).switches.empty() ? 0 : 1;
  }
  EXPECT_LE(named, 2) << "of 200 noise-only sets";
}

TEST(Placement, TopologyUsage) {
  auto parse = [](std::vector<const char*> args) {
    std::string exit_text;
    args.insert(args.begin(), "collbench-report");
    return parse_command_line(static_cast<int>(args.size()), args.data(), exit_text);
  };
  TempDir dir;
  dir.write("topology.conf", "SwitchName=a Nodes=n[1-2]\nSwitchName=b Switches=a\n");
  dir.write("bad.conf", "SwitchName=a Nodes=n[1-2]\nSwitchName=b Switch=a\n");
  const std::string good = (dir.path() / "topology.conf").string();
  const std::string bad = (dir.path() / "bad.conf").string();
  EXPECT_EQ(parse({"results", "--topology", good.c_str()}).topology->uplinks.size(), 2u);
  try {
    parse({"results", "--suspects", "--topology", bad.c_str()});
    ADD_FAILURE() << "a bad topology file was taken";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage);
    EXPECT_NE(std::string(e.what()).find(bad + ":2: unknown key Switch"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(parse({"results", "--topology-hosts", good.c_str()}), Error);
  EXPECT_THROW(parse({"--baseline", "a", "--candidate", "b", "--topology", good.c_str()}), Error);
  EXPECT_THROW(parse({"results", "--format", "gbench", "--topology", good.c_str()}), Error);
}

TEST(Suspects, SuspectsFlagUsage) {
  auto parse = [](std::vector<const char*> args) {
    std::string exit_text;
    args.insert(args.begin(), "collbench-report");
    return parse_command_line(static_cast<int>(args.size()), args.data(), exit_text);
  };
  EXPECT_TRUE(parse({"results", "--suspects"}).suspects);
  EXPECT_THROW(parse({"results", "--suspects", "--format", "gbench"}), Error);
  EXPECT_THROW(parse({"--suspects", "--baseline", "a", "--candidate", "b"}), Error);
}

}  // namespace
}  // namespace collbench::report
