// Which host or link is slow (see collbench/report/suspects.h).
//
// The rule, pair evidence. At each measured point (a run's test, size, dtype, op, placement and
// every other setting of the row) each pair's busbw is divided by the median over the pairs
// measured there: the ratio is free of the size's and the run's own level. A pair's ratio is
// the median of its ratios over points and repeats; a host's, the median of its pairs'.
//   With R the pairs a host is not in, spread(R) the spread one pair's ratio has when nothing
//   is wrong (reference_of, spread_of) and m(n) = min(1, sqrt(pi / 2n)) the shrinking of a
//   spread for a median of n values, a host is named when the median of its n pairs is below
//       median(R) - max(min_effect x median(R), spread_factor x spread(R) x m(n))
//   and more than half of its pairs are below median(R) x (1 - min_effect). Judging a host
//   against the pairs it is not in keeps its own slow pairs out of the reference; "more than
//   half of its pairs" tells a bad host (all N-1 of its pairs slow) from a bad link or a host
//   next to a bad one (one slow pair of N-1).
//   A link is named when its pair is below median(R) - max(min_effect x median(R),
//   spread_factor x spread(R)), R every other pair of hosts not named, and neither of its hosts is
//   named.
// The rule, stragglers. Every row names its slowest rank; a host is named when it was the
// slowest of the rows it took part in far more often than chance (1 / hosts in the row), by a
// one-sided binomial test at straggler_alpha / hosts tested, at least min(3 x chance,
// (1 + chance) / 2) of them (three times chance in a large job, halfway to always in a small
// one, where three times is out of reach), and by a median excess of the slowest rank's time
// over the mean rank's of at least min_straggler_excess: ranks finish a few percent apart in
// any job, so a host that is last by 1% is not worth excluding.
#include "collbench/report/suspects.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numbers>
#include <optional>
#include <set>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "collbench/report/model.h"

namespace collbench::report {

namespace {

// The standard deviation of normal data, estimated two ways from the deviations from `centre`:
// 1.4826 x their median (MAD) and sqrt(pi/2) x their mean; the larger is taken, and returned as
// an upper bound. The MAD alone ignores up to half the values: of the few pairs of a small job,
// two or three sit at the median of every point by construction and its estimate collapses. The
// mean deviation uses every value and is still bounded by an outlier's distance, not its square.
double spread_of(const std::vector<double>& values, double centre) {
  if (values.empty()) return 0;
  std::vector<double> deviations;
  deviations.reserve(values.size());
  double sum = 0;
  for (double v : values) {
    deviations.push_back(std::abs(v - centre));
    sum += deviations.back();
  }
  const double n = static_cast<double>(values.size());
  const double estimate =
      std::max(1.4826 * median(std::move(deviations)), std::sqrt(std::numbers::pi / 2) * sum / n);
  // From few values the estimate itself is uncertain (relative standard error about 0.76 /
  // sqrt(n) for the mean deviation): the upper end of its range, two standard errors, is used,
  // so that a spread that came out small by chance cannot make an ordinary shortfall look large.
  // At most twice the estimate: below 9 values the bound means little, and the minimum effect
  // and the spread_factor already ask for a large shortfall.
  return estimate / std::max(0.5, 1 - 1.5 / std::sqrt(n));
}

std::string percent(double fraction) { return fmt::format("{:.0f}%", 100 * fraction); }

// Everything that makes two rows of one run different measurements; pairs are compared only
// with pairs measured the same way in the same run.
using PointKey = std::tuple<Name, Name, std::uint64_t, DType, int, Placement, int, int, int, int,
                            int, int, MeasureMode, std::size_t>;

PointKey point_key(const ReadRow& row) {
  return {row.run_id, row.test, row.bytes, row.dtype, row.op ? static_cast<int>(*row.op) : -1,
          row.placement, row.root.value_or(-1), row.window.value_or(-1), row.cycle.value_or(-1),
          row.ops_per_iteration.value_or(-1), row.misalign.value_or(-1),
          row.buffers ? static_cast<int>(*row.buffers) : -1, row.mode,
          // Labels are interned: equal sets are one identity.
          row.labels.identity()};
}

bool is_pair_row(const ReadRow& row) {
  return row.group &&
         (row.group->mode == SplitMode::kPairs || row.group->mode == SplitMode::kSample) &&
         row.group->hosts.size() == 2 && row.group->hosts[0] != row.group->hosts[1] &&
         row.busbw_gbps && std::isfinite(*row.busbw_gbps) && *row.busbw_gbps > 0;
}

// --- Pair evidence. ----------------------------------------------------------------------------

struct PairData {
  std::vector<double> ratios;
  std::uint64_t largest_bytes = 0;
  std::vector<double> largest_busbw;
};

// The standard deviation of a median of n normal values is about sqrt(pi / 2n) that of one
// (exactly so for large n, an overestimate for small n; 1 for n = 1).
double per_median(int n) {
  return std::min(1.0, std::sqrt(std::numbers::pi / (2.0 * std::max(n, 1))));
}

// What a pair or a host is judged against: the median ratio of the reference pairs and the
// spread a pair's ratio has when nothing is wrong. That spread is the larger of the reference
// pairs' spread (pairs that differ for good) and their rows' spread scaled to a median of the
// pair's rows (the noise of single measurements): the pairs' spread alone understates the
// noise when each is a median of few rows, because every point's median pair sits at exactly 1
// and pulls the medians together.
struct Reference {
  std::size_t pairs = 0;
  double median = 0, pairs_spread = 0, rows_spread = 0;

  double spread(int samples) const {
    return std::max(pairs_spread, per_median(samples) * rows_spread);
  }
  /// What a value with spread `spread` must be below to count: min_effect is relative to the
  /// reference (a shortfall of 10% of what the other pairs reach).
  double threshold(double spread, const SuspectRule& rule) const {
    return median - std::max(rule.min_effect * median, rule.spread_factor * spread);
  }
};

Reference reference_of(const std::vector<std::size_t>& pairs, const std::vector<PairStat>& stats,
                       const std::vector<std::vector<double>>& ratios) {
  std::vector<double> medians, rows;
  for (auto i : pairs) {
    medians.push_back(stats[i].ratio);
    rows.insert(rows.end(), ratios[i].begin(), ratios[i].end());
  }
  Reference ref;
  ref.pairs = pairs.size();
  ref.median = median(medians);
  ref.pairs_spread = spread_of(medians, ref.median);
  ref.rows_spread = spread_of(rows, median(rows));
  return ref;
}

// Up to this many pairs every host and link is judged against the pairs without it; beyond,
// against one reference of all pairs (one host's pairs are then a few percent of it, and the
// exact references would cost pairs x rows).
constexpr std::size_t kExactReferencePairs = 2000;

void pair_evidence(const ResultSet& set, const SuspectRule& rule, SuspectReport& report) {
  std::map<Name, std::uint64_t> largest_per_test;
  for (const auto& row : set.rows) {
    if (row.status != RowStatus::kOk) continue;
    if (row.group) ++report.group_rows;
    if (!is_pair_row(row)) continue;
    auto& largest = largest_per_test[row.test];
    largest = std::max(largest, row.bytes);
  }
  std::map<PointKey, std::vector<std::uint32_t>> points;
  for (std::uint32_t i = 0; i < set.rows.size(); ++i) {
    const auto& row = set.rows[i];
    if (row.status != RowStatus::kOk || !is_pair_row(row)) continue;
    if (row.bytes < rule.min_pair_bytes && largest_per_test[row.test] >= rule.min_pair_bytes)
      continue;
    points[point_key(row)].push_back(i);
  }
  std::map<std::pair<Name, Name>, PairData> pairs;
  for (const auto& [key, rows] : points) {
    if (static_cast<int>(rows.size()) < rule.min_pairs_per_point) continue;
    std::vector<double> busbw;
    for (auto i : rows) busbw.push_back(*set.rows[i].busbw_gbps);
    const double reference = median(busbw);
    if (!(reference > 0)) continue;
    for (auto i : rows) {
      const auto& row = set.rows[i];
      Name a = row.group->hosts[0], b = row.group->hosts[1];
      if (b < a) std::swap(a, b);
      auto& data = pairs[{a, b}];
      data.ratios.push_back(*row.busbw_gbps / reference);
      ++report.pair_rows;
      if (row.bytes > data.largest_bytes) {
        data.largest_bytes = row.bytes;
        data.largest_busbw.clear();
      }
      if (row.bytes == data.largest_bytes) data.largest_busbw.push_back(*row.busbw_gbps);
    }
  }
  std::set<Name> hosts;
  std::vector<std::vector<double>> ratios;  // each pair's ratios, as report.pairs
  for (auto& [key, data] : pairs) {
    report.pairs.push_back({key.first, key.second, median(data.ratios),
                            static_cast<int>(data.ratios.size()), median(data.largest_busbw)});
    ratios.push_back(std::move(data.ratios));
    hosts.insert(key.first);
    hosts.insert(key.second);
  }
  report.hosts.assign(hosts.begin(), hosts.end());

  const std::size_t count = report.pairs.size();
  const bool exact = count <= kExactReferencePairs;
  std::map<Name, std::vector<std::size_t>> pairs_of;
  std::vector<std::size_t> all(count);
  for (std::size_t i = 0; i < count; ++i) {
    all[i] = i;
    pairs_of[report.pairs[i].a].push_back(i);
    pairs_of[report.pairs[i].b].push_back(i);
  }
  const Reference shared = exact ? Reference{} : reference_of(all, report.pairs, ratios);

  // Hosts, each judged against the pairs it is not in.
  std::set<Name> named;
  for (Name host : report.hosts) {
    const auto& mine = pairs_of[host];
    std::vector<double> own;
    int samples = std::numeric_limits<int>::max();
    for (auto i : mine) {
      own.push_back(report.pairs[i].ratio);
      samples = std::min(samples, report.pairs[i].samples);
    }
    Reference ref = shared;
    if (exact) {
      std::vector<std::size_t> others;
      for (std::size_t i = 0; i < count; ++i) {
        if (report.pairs[i].a != host && report.pairs[i].b != host) others.push_back(i);
      }
      ref = reference_of(others, report.pairs, ratios);
    }
    HostPairs h;
    h.host = host;
    h.pairs = static_cast<int>(own.size());
    h.ratio = median(own);
    if (static_cast<int>(ref.pairs) >= rule.min_reference_pairs) {
      // The host's ratio is a median of its pairs: its spread is a pair's shrunk as for a
      // median of that many values, which is what lets four or five hosts of a noisy fabric
      // name a bad one. Most of its pairs must be slow by the minimum effect as well: that is
      // what tells a bad host from a bad link, which slows one pair of the host's N-1.
      h.reference = ref.median;
      h.reference_spread = ref.spread(samples);
      h.threshold = ref.threshold(h.reference_spread * per_median(h.pairs), rule);
      const double slow = ref.median * (1 - rule.min_effect);
      h.slow_pairs = static_cast<int>(
          std::count_if(own.begin(), own.end(), [&](double r) { return r < slow; }));
      // Two pairs at least: a host seen in one pair cannot be told from its link.
      if (h.pairs >= 2 && h.ratio < h.threshold && 2 * h.slow_pairs > h.pairs && h.reference > 0) {
        named.insert(host);
        SuspectHost s;
        s.host = host;
        s.evidence = Evidence::kPairs;
        s.effect = (h.reference - h.ratio) / h.reference;
        s.reason = fmt::format(
            "pair evidence: {} of its {} pairs are slow; they ran at a median {} of the median "
            "of the other {} pairs (named below {}; spread of a pair {})",
            h.slow_pairs, h.pairs, percent(h.ratio / h.reference), ref.pairs,
            percent(h.threshold / h.reference), percent(h.reference_spread / h.reference));
        report.suspects.push_back(std::move(s));
      }
    }
    report.host_pairs.push_back(h);
  }

  // Links between hosts not named, each judged against every other pair of good hosts.
  std::vector<std::size_t> good;
  for (std::size_t i = 0; i < count; ++i) {
    if (!named.count(report.pairs[i].a) && !named.count(report.pairs[i].b)) good.push_back(i);
  }
  const Reference shared_good = exact ? Reference{} : reference_of(good, report.pairs, ratios);
  for (auto i : good) {
    const auto& p = report.pairs[i];
    Reference ref = shared_good;
    if (exact) {
      std::vector<std::size_t> others;
      for (auto j : good) {
        if (j != i) others.push_back(j);
      }
      ref = reference_of(others, report.pairs, ratios);
    }
    if (static_cast<int>(ref.pairs) < rule.min_reference_pairs || !(ref.median > 0)) continue;
    const double spread = ref.spread(p.samples);
    const double threshold = ref.threshold(spread, rule);
    if (!(p.ratio < threshold)) continue;
    SlowLink link;
    link.a = p.a;
    link.b = p.b;
    link.ratio = p.ratio / ref.median;
    link.effect = 1 - link.ratio;
    link.reason = fmt::format(
        "pair evidence: the pair ran at {} of the median of the other {} pairs (named below {}; "
        "spread of a pair {}); neither host is slow with its other pairs",
        percent(link.ratio), ref.pairs, percent(threshold / ref.median),
        percent(spread / ref.median));
    report.links.push_back(std::move(link));
  }
}

// --- Straggler evidence. -----------------------------------------------------------------------

// Who took part in a row: a group's members, or the whole job's.
struct Participants {
  std::vector<Name> hosts;
  std::vector<int> ranks;  ///< a group's ranks
  /// The whole job's rank count (ranks 0 to job_ranks - 1), never spelt out: it comes from the
  /// input and may be any int.
  int job_ranks = 0;
  std::size_t rows = 0;
};

struct Tally {
  std::size_t slowest = 0;
  std::size_t rows = 0;
  double chance_sum = 0;
  std::vector<double> excess;
  std::map<double, std::size_t> chances;  ///< rows per chance of being the slowest
};

// P(X >= k), X the number of rows a host was slowest in, each row with its own chance: exact
// when every row has the same chance, else the normal approximation with continuity
// correction (mixed chances come from mixed group sizes, i.e. many rows).
double tail_probability(const Tally& t) {
  if (t.chances.size() == 1) return binomial_tail(t.slowest, t.rows, t.chances.begin()->first);
  double mean = 0, variance = 0;
  for (const auto& [p, n] : t.chances) {
    mean += static_cast<double>(n) * p;
    variance += static_cast<double>(n) * p * (1 - p);
  }
  if (variance <= 0) return static_cast<double>(t.slowest) > mean ? 0 : 1;
  const double z = (static_cast<double>(t.slowest) - 0.5 - mean) / std::sqrt(variance);
  return 0.5 * std::erfc(z / std::sqrt(2.0));
}

void straggler_evidence(const ResultSet& set, const SuspectRule& rule, SuspectReport& report) {
  // Each run's rank -> host, from its context record.
  std::unordered_map<Name, std::unordered_map<int, Name>> rank_hosts;
  std::unordered_map<Name, std::vector<Name>> run_hosts;
  for (const auto& [run, read] : set.contexts) {
    auto& hosts = run_hosts[run];
    auto& ranks = rank_hosts[run];
    for (const auto& h : read.context.hosts) {
      const Name host(h.name);
      if (std::find(hosts.begin(), hosts.end(), host) == hosts.end()) hosts.push_back(host);
      for (int r : h.ranks) ranks.emplace(r, host);
    }
  }
  auto host_of = [&](Name run, int rank) -> std::optional<Name> {
    const auto it = rank_hosts.find(run);
    if (it == rank_hosts.end()) return std::nullopt;
    const auto r = it->second.find(rank);
    if (r == it->second.end()) return std::nullopt;
    return r->second;
  };

  // Rows are counted per set of participants (a run's whole job, or one group of it), then
  // spread over the participants: a million rows of a 1000-rank job stay cheap.
  using GroupKey = std::tuple<Name, int, int, int, int>;  // run, mode, round, index, nranks
  std::map<GroupKey, Participants> participants;
  std::map<Name, Tally> hosts;
  std::map<std::pair<Name, int>, Tally> ranks;
  std::map<Name, std::set<int>> slowest_of_run;
  for (const auto& row : set.rows) {
    if (row.status != RowStatus::kOk || !row.time_us || !row.slowest_rank) continue;
    const RowTimes& t = *row.time_us;
    if (!(t.mean > 0) || !std::isfinite(t.slowest)) continue;
    const GroupKey key =
        row.group ? GroupKey{row.run_id, static_cast<int>(row.group->mode), row.group->round,
                             row.group->index, static_cast<int>(row.group->ranks.size())}
                  : GroupKey{row.run_id, -1, 0, 0, row.nranks};
    auto [it, fresh] = participants.try_emplace(key);
    Participants& p = it->second;
    if (fresh) {
      if (row.group) {
        p.hosts = row.group->hosts;
        p.ranks = row.group->ranks;
      } else {
        if (const auto h = run_hosts.find(row.run_id); h != run_hosts.end()) p.hosts = h->second;
        if (stated(row.nranks)) p.job_ranks = row.nranks;
      }
    }
    const int rank = *row.slowest_rank;
    const std::optional<Name> host =
        row.slowest_host ? row.slowest_host : host_of(row.run_id, rank);
    // A row whose participants are unknown (an imported run without hosts) cannot be weighed
    // against chance.
    if (p.hosts.empty() || !host) continue;
    // Without a context record a rank's host is known from the rows it was the slowest of.
    rank_hosts[row.run_id].emplace(rank, *host);
    slowest_of_run[row.run_id].insert(rank);
    ++p.rows;
    const double excess = t.slowest / t.mean - 1;
    auto& h = hosts[*host];
    ++h.slowest;
    h.excess.push_back(excess);
    auto& r = ranks[{*host, rank}];
    ++r.slowest;
    r.excess.push_back(excess);
  }
  for (const auto& [key, p] : participants) {
    if (p.rows == 0) continue;
    const double host_chance = 1.0 / static_cast<double>(p.hosts.size());
    for (Name h : p.hosts) {
      auto& t = hosts[h];
      t.rows += p.rows;
      t.chance_sum += host_chance * static_cast<double>(p.rows);
      t.chances[host_chance] += p.rows;
    }
    // Only ranks that were ever the slowest are listed, so only they are counted.
    auto count_rank = [&](int r, double chance) {
      const auto host = host_of(std::get<0>(key), r);
      if (!host) return;
      const auto it = ranks.find({*host, r});
      if (it == ranks.end()) return;
      it->second.rows += p.rows;
      it->second.chance_sum += chance * static_cast<double>(p.rows);
    };
    if (!p.ranks.empty()) {
      for (int r : p.ranks) count_rank(r, 1.0 / static_cast<double>(p.ranks.size()));
    } else if (p.job_ranks > 0) {
      for (int r : slowest_of_run[std::get<0>(key)]) {
        if (r < p.job_ranks) count_rank(r, 1.0 / p.job_ranks);
      }
    }
  }

  // Hosts that could have been named: enough rows, and rows with another host to lose to.
  std::size_t tested = 0;
  for (const auto& [host, t] : hosts) {
    tested += static_cast<int>(t.rows) >= rule.min_straggler_rows &&
              t.chance_sum < static_cast<double>(t.rows);
  }
  std::vector<Straggler> list;
  for (const auto& [host, t] : hosts) {
    if (t.slowest == 0) continue;
    Straggler s;
    s.host = host;
    s.slowest = t.slowest;
    s.rows = std::max(t.rows, t.slowest);
    s.chance = t.rows ? t.chance_sum / static_cast<double>(t.rows) : 1;
    s.median_excess = median(t.excess);
    s.p_value = s.chance < 1 ? tail_probability(t) : 1;
    const double far_more = std::min(3 * s.chance, (1 + s.chance) / 2);
    s.named = tested > 0 && static_cast<int>(t.rows) >= rule.min_straggler_rows && s.chance < 1 &&
              s.p_value < rule.straggler_alpha / static_cast<double>(tested) &&
              s.share() >= far_more && s.median_excess >= rule.min_straggler_excess;
    list.push_back(s);
  }
  std::stable_sort(list.begin(), list.end(),
                   [](const Straggler& a, const Straggler& b) { return a.slowest > b.slowest; });
  for (const auto& s : list) {
    report.stragglers.push_back(s);
    std::vector<Straggler> of_host;
    for (const auto& [key, t] : ranks) {
      if (key.first != s.host) continue;
      Straggler r;
      r.host = s.host;
      r.rank = key.second;
      r.slowest = t.slowest;
      r.rows = std::max(t.rows, t.slowest);
      r.chance = t.rows ? t.chance_sum / static_cast<double>(t.rows) : 1;
      r.median_excess = median(t.excess);
      of_host.push_back(r);
    }
    std::stable_sort(of_host.begin(), of_host.end(),
                     [](const Straggler& a, const Straggler& b) { return a.slowest > b.slowest; });
    report.stragglers.insert(report.stragglers.end(), of_host.begin(), of_host.end());
    if (!s.named) continue;
    const std::string reason = fmt::format(
        "straggler evidence: the slowest rank in {} of the {} rows it took part in ({}; chance "
        "{}, p = {:.2g}), by a median {} over the mean rank",
        s.slowest, s.rows, percent(s.share()), percent(s.chance), s.p_value,
        percent(s.median_excess));
    const auto it = std::find_if(report.suspects.begin(), report.suspects.end(),
                                 [&](const SuspectHost& h) { return h.host == s.host; });
    if (it != report.suspects.end()) {
      it->evidence = Evidence::kBoth;
      it->effect = std::max(it->effect, s.median_excess);
      it->reason += "; " + reason;
    } else {
      report.suspects.push_back({s.host, Evidence::kStragglers, s.median_excess, reason});
    }
  }
}

}  // namespace

std::string_view name(Evidence evidence) {
  switch (evidence) {
    case Evidence::kPairs:
      return "pairs";
    case Evidence::kStragglers:
      return "stragglers";
    case Evidence::kBoth:
      return "pairs and stragglers";
  }
  return "";
}

const PairStat* SuspectReport::pair(Name a, Name b) const {
  if (b < a) std::swap(a, b);
  // `pairs` is sorted by (a, b): the analysis builds it from an ordered map.
  const auto it = std::lower_bound(pairs.begin(), pairs.end(), std::pair{a, b},
                                   [](const PairStat& p, const std::pair<Name, Name>& key) {
                                     return std::pair{p.a, p.b} < key;
                                   });
  return it != pairs.end() && it->a == a && it->b == b ? &*it : nullptr;
}

double binomial_tail(std::size_t k, std::size_t n, double p) {
  if (k == 0) return 1;
  if (k > n || p <= 0) return 0;
  if (p >= 1) return 1;
  const double nd = static_cast<double>(n);
  const double lp = std::log(p), lq = std::log1p(-p);
  double sum = 0;
  for (std::size_t i = k; i <= n; ++i) {
    const double id = static_cast<double>(i);
    const double term = std::exp(std::lgamma(nd + 1) - std::lgamma(id + 1) -
                                 std::lgamma(nd - id + 1) + id * lp + (nd - id) * lq);
    sum += term;
    // Past the mode the terms only shrink: stop once they no longer count.
    if (id > nd * p && term < sum * 1e-17) break;
  }
  return std::min(1.0, sum);
}

SuspectReport find_suspects(const ResultSet& set, const SuspectRule& rule) {
  SuspectReport report;
  pair_evidence(set, rule, report);
  straggler_evidence(set, rule, report);
  std::stable_sort(report.suspects.begin(), report.suspects.end(),
                   [](const SuspectHost& a, const SuspectHost& b) {
                     return a.effect != b.effect ? a.effect > b.effect : a.host < b.host;
                   });
  std::stable_sort(report.links.begin(), report.links.end(),
                   [](const SlowLink& a, const SlowLink& b) { return a.effect > b.effect; });
  return report;
}

namespace {

// Whether a host name can go into an exclude list as it is: a hostname's characters only. Host
// names come from the input, which could hold a newline or a comma.
bool plain_hostname(std::string_view host) {
  return !host.empty() && host.front() != '#' && host.front() != '-' &&
         std::all_of(host.begin(), host.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '-' || c == '_';
         });
}

// A host name on a comment line: printable ASCII, anything else escaped.
std::string comment_text(std::string_view host) {
  std::string out;
  for (unsigned char c : host) {
    if (c >= 0x20 && c < 0x7f)
      out += static_cast<char>(c);
    else
      out += fmt::format("\\x{:02x}", c);
  }
  return out;
}

}  // namespace

std::string suspects_text(const SuspectReport& report) {
  std::string text, comments;
  for (const auto& s : report.suspects) {
    if (plain_hostname(s.host.view()))
      text += fmt::format("{}\n", s.host);
    else
      comments += fmt::format("# slow host with a name that is not a hostname: {}\n",
                              comment_text(s.host.view()));
  }
  text += comments;
  for (const auto& l : report.links) {
    text += fmt::format("# slow link: {} <-> {}: {} of the median pair\n", comment_text(l.a.view()),
                        comment_text(l.b.view()), percent(l.ratio));
  }
  return text;
}

}  // namespace collbench::report
