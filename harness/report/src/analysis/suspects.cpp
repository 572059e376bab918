// Which host or link is slow (see collbench/report/suspects.h).
//
// The rule, pair evidence. Work in logs of busbw: a slow link is slower by a factor, and a factor
// of any size is a distance there (as a ratio a pair can fall short by at most 100%, so a
// spread of 30% could hide anything). A measured point is a run's test, size, dtype, op,
// placement and every other setting of the row.
//   Levels: every pair's level comes from a two-way fit, log busbw(pair, point) = level(pair) +
//   level(point) + noise, by median polish (fit_pairs), so that a point's level is taken from
//   pairs whose own level is already out. The plain median of a point's pairs would not do: a
//   bad host among four is in three of the six pairs, and that median jumps between the slow
//   and the fast group from point to point.
//   Noise: what is measured within each pair: the differences between its rows at different
//   points once the points' levels are out, or at least a row's batch noise from its
//   per-iteration times (cv / sqrt(n)), shrunk for a median of the pair's rows. Never the spread
//   between pairs around a centre that a suspect's own slow pairs moved.
//   A host is judged against the pairs it is not in (R): the median level of its n pairs is
//   compared with the median of R, with the spread of a pair about its own group (its pairs
//   about theirs, R about its own: a two-sample comparison), at least the noise above:
//       median(own) < median(R) - max(min_effect, spread_factor x spread x hypot(m(n), m(|R|)))
//   with m(n) = min(1, sqrt(pi / 2n)) the shrinking of a spread for a median of n values, and
//   more than half of its pairs below median(R) by the minimum effect: that tells a bad host
//   (all N-1 of its pairs slow) from a bad link or a host next to a bad one (one slow pair of
//   N-1). The spread between pairs is scaled up for the few values it comes from (spread_of).
//   A link is judged against R, every other pair of hosts not named, and named when
//       level < median(R) - max(min_effect, spread_factor x spread(R) x hypot(1, m(|R|))).
// The rule, stragglers. Every row names its slowest rank; a host is named when it was the
// slowest of the rows it took part in far more often than chance (1 / hosts in the row), by a
// one-sided binomial test at straggler_alpha / hosts tested, at least min(3 x chance,
// (1 + chance) / 2) of them (three times chance in a large job, halfway to always in a small
// one, where three times is out of reach), and by a median excess of the slowest rank's time
// over the mean rank's of at least min_straggler_excess: ranks finish a few percent apart in
// any job, so a host that is last by 1% is not worth excluding.
#include "collbench/report/suspects.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

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
#include "collbench/text.h"

namespace collbench::report {

namespace {

// Pairs are compared only with pairs that measured the same point in the same run and cycle, under
// the same labels (interned: equal sets are one identity).
using PointKey = std::tuple<Name, MeasuredPoint, int, std::size_t>;

PointKey point_key(const ReadRow& row) {
  return {row.run_id, measured_point(row), row.cycle.value_or(-1), row.labels.identity()};
}

bool is_pair_row(const ReadRow& row) {
  return row.group &&
         (row.group->mode == SplitMode::kPairs || row.group->mode == SplitMode::kSample) &&
         row.group->hosts.size() == 2 && row.group->hosts[0] != row.group->hosts[1] &&
         row.busbw_gbps && std::isfinite(*row.busbw_gbps) && *row.busbw_gbps > 0;
}

// --- Pair evidence. ----------------------------------------------------------------------------

// The standard deviation of a median of n normal values is about sqrt(pi / 2n) that of one
// (exactly so for large n, an overestimate for small n; 1 for n = 1).
double per_median(std::size_t n) {
  return std::min(
      1.0, std::sqrt(std::numbers::pi / (2.0 * static_cast<double>(std::max<std::size_t>(n, 1)))));
}

// The standard deviation of normal data from deviations of `dof` degrees of freedom, estimated
// two ways: 1.4826 x their median absolute value (MAD) and sqrt(pi / 2) x their mean absolute
// value, the larger taken. The MAD alone ignores up to half of them, and of a few pairs some sit
// at their group's median by construction; the mean deviation uses all and is still bounded by
// an outlier's distance, not its square. The deviations count `dof` free values (fewer than
// their number once centres were fitted), so the estimate is scaled up by sqrt(count / dof).
// `uncertain`: the estimate is all there is to go by, and from few values it is itself
// uncertain (relative standard error about 0.76 / sqrt(dof)), so it is scaled up again to the
// upper end of that range, so that a spread that came out small by chance cannot make an
// ordinary shortfall look large. 0 without a degree of freedom.
double spread_of(const std::vector<double>& deviations, double dof, bool uncertain = false) {
  if (deviations.empty() || !(dof >= 1)) return 0;
  std::vector<double> magnitudes;
  magnitudes.reserve(deviations.size());
  double sum = 0;
  for (double d : deviations) {
    magnitudes.push_back(std::abs(d));
    sum += magnitudes.back();
  }
  const double n = static_cast<double>(deviations.size());
  const double estimate =
      std::max(1.4826 * median(std::move(magnitudes)), std::sqrt(std::numbers::pi / 2) * sum / n) *
      std::sqrt(n / std::min(n, dof));
  return uncertain ? estimate / std::max(0.5, 1 - 1.5 / std::sqrt(dof))
                   : estimate * (1 + 1 / std::sqrt(dof));
}

// Deviations of `values` from their median, appended to `out`; returns the median.
double centre(const std::vector<double>& values, std::vector<double>& out) {
  const double m = median(values);
  for (double v : values) out.push_back(v - m);
  return m;
}

// Every pair's level, as a two-way fit of the log bus bandwidth of its rows: log busbw(pair,
// point) = level(pair) + level(point) + noise, by median polish (Tukey), which a few slow pairs
// cannot move. The point levels are estimated from pairs whose own level is already taken out:
// dividing by the plain median of a point's pairs fails when half of them are slow (a bad host
// among four is in three of the six pairs), because that median then jumps between the slow and
// the fast group from point to point. Logs, because a slow link is slower by a factor, and
// factors of any size are distances in logs (as ratios a pair can fall short by at most 100%).
struct PairFit {
  std::vector<double> level;  ///< per pair: log of its busbw relative to the median pair
  std::vector<int> samples;   ///< rows per pair
  double within = 0;          ///< noise of one row about its pair's and its point's level
  /// per pair: each row's own level (log busbw less its point's level), on the scale of `level`
  std::vector<std::vector<double>> rows;
};

struct PairSample {
  std::uint32_t pair = 0, point = 0;
  double value = 0;  ///< log busbw
};

PairFit fit_pairs(const std::vector<PairSample>& rows, std::size_t pairs, std::size_t points,
                  double row_noise) {
  PairFit fit;
  fit.level.assign(pairs, 0);
  fit.samples.assign(pairs, 0);
  std::vector<double> point_level(points, 0);
  std::vector<std::vector<double>> by_pair(pairs), by_point(points);
  for (const auto& r : rows) ++fit.samples[r.pair];
  auto polish_points = [&] {
    for (auto& v : by_point) v.clear();
    for (const auto& r : rows) by_point[r.point].push_back(r.value - fit.level[r.pair]);
    for (std::size_t k = 0; k < points; ++k) point_level[k] = median(by_point[k]);
  };
  auto polish_pairs = [&] {
    for (auto& v : by_pair) v.clear();
    for (const auto& r : rows) by_pair[r.pair].push_back(r.value - point_level[r.point]);
    for (std::size_t p = 0; p < pairs; ++p) fit.level[p] = median(by_pair[p]);
  };
  polish_points();  // the plain median of each point's pairs, as a first guess
  for (int sweep = 0; sweep < 4; ++sweep) {
    polish_pairs();
    polish_points();
  }
  polish_pairs();
  const double middle = median(fit.level);
  for (auto& l : fit.level) l -= middle;
  for (auto& l : point_level) l += middle;
  fit.rows = by_pair;
  for (auto& pair_rows : fit.rows) {
    for (auto& l : pair_rows) l -= middle;
  }
  // The rows' noise: the differences between a pair's rows once the points' levels are taken
  // out (each difference of two rows has twice one row's variance), with the degrees of freedom
  // the point levels left; or at least the noise of one row's batch as its per-iteration times
  // show it, whichever is larger. Differences, not residuals from the pairs' fitted medians: of
  // a median of three, one residual is zero by construction.
  std::vector<double> differences;
  double free_values = 0;
  for (std::size_t p = 0; p < pairs; ++p) {
    const auto& z = by_pair[p];
    for (std::size_t i = 0; i < z.size(); ++i) {
      for (std::size_t j = i + 1; j < z.size(); ++j)
        differences.push_back((z[i] - z[j]) / std::numbers::sqrt2);
    }
    if (!z.empty()) free_values += static_cast<double>(z.size() - 1);
  }
  const double dof = free_values - static_cast<double>(points) + 1;
  const double scale = dof >= 1 ? std::sqrt(free_values / dof) : 0;
  fit.within =
      std::max(spread_of(differences, static_cast<double>(differences.size())) * scale, row_noise);
  return fit;
}

// Up to this many pairs every host and link is judged against the pairs without it; beyond,
// against one reference of all pairs (one host's pairs are then a few percent of it, and the
// exact references would cost pairs x pairs).
constexpr std::size_t kExactReferencePairs = 2000;

// A shortfall in logs that is the rule's minimum effect.
double min_effect_log(const SuspectRule& rule) { return -std::log1p(-rule.min_effect); }

// The rows that are pair evidence, grouped by the point they measured: ok rows of two-host groups,
// at least rule.min_pair_bytes where a test reached that size, in points with enough pairs.
std::vector<std::vector<std::uint32_t>> pair_points(const ResultSet& set, const SuspectRule& rule,
                                                    SuspectReport& report) {
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
  std::vector<std::vector<std::uint32_t>> used_points;
  for (const auto& [key, rows] : points) {
    if (static_cast<int>(rows.size()) >= rule.min_pairs_per_point) used_points.push_back(rows);
  }
  return used_points;
}

// A row's two hosts, in order.
std::pair<Name, Name> hosts_of(const ReadRow& row) {
  Name a = row.group->hosts[0], b = row.group->hosts[1];
  if (b < a) std::swap(a, b);
  return {a, b};
}

// Every pair's level from its rows (report.pairs, report.hosts), and how noisy one level is.
struct PairLevels {
  PairFit fit;
  double level_noise = 0;   ///< of one pair's level from its rows alone
  bool unmeasured = false;  ///< no measure of the rows' own noise: the pairs' spread is all
  std::vector<double> of(const std::vector<std::size_t>& which) const {
    std::vector<double> v;
    v.reserve(which.size());
    for (auto i : which) v.push_back(fit.level[i]);
    return v;
  }
};

PairLevels fit_pair_levels(const ResultSet& set,
                           const std::vector<std::vector<std::uint32_t>>& used_points,
                           SuspectReport& report) {
  struct PairData {
    std::uint64_t largest_bytes = 0;
    std::vector<double> largest_busbw;
    std::uint32_t index = 0;
  };
  std::map<std::pair<Name, Name>, PairData> pairs;
  for (const auto& rows : used_points) {
    for (auto i : rows) {
      const auto& row = set.rows[i];
      auto& data = pairs[hosts_of(row)];
      if (row.bytes > data.largest_bytes) {
        data.largest_bytes = row.bytes;
        data.largest_busbw.clear();
      }
      if (row.bytes == data.largest_bytes) data.largest_busbw.push_back(*row.busbw_gbps);
    }
  }
  std::set<Name> hosts;
  std::uint32_t index = 0;
  for (auto& [key, data] : pairs) {
    data.index = index++;
    hosts.insert(key.first);
    hosts.insert(key.second);
  }
  report.hosts.assign(hosts.begin(), hosts.end());

  // The fit of every pair's level, and the noise of one row: what its residuals show, or at
  // least what one row's per-iteration times show (the standard error of a batch of n
  // iterations with their coefficient of variation, the median over rows).
  std::vector<PairSample> samples;
  std::vector<double> batch_noise;
  for (std::uint32_t k = 0; k < used_points.size(); ++k) {
    for (auto i : used_points[k]) {
      const auto& row = set.rows[i];
      samples.push_back({pairs[hosts_of(row)].index, k, std::log(*row.busbw_gbps)});
      ++report.pair_rows;
      if (row.time_us) {
        const Summary& it = row.time_us->per_iteration;
        if (it.n >= 2 && std::isfinite(it.cv) && it.cv >= 0)
          batch_noise.push_back(it.cv / std::sqrt(static_cast<double>(it.n)));
      }
    }
  }
  // Each pair's latency: the median time of its rows at the smallest size it was measured at,
  // from every pair row (the levels use the large sizes alone).
  std::map<std::pair<Name, Name>, std::pair<std::uint64_t, std::vector<double>>> smallest;
  for (const auto& row : set.rows) {
    if (row.status != RowStatus::kOk || !is_pair_row(row) || !(row.time() > 0)) continue;
    auto& [bytes, times] = smallest[hosts_of(row)];
    if (times.empty() || row.bytes < bytes) {
      bytes = row.bytes;
      times.clear();
    }
    if (row.bytes == bytes) times.push_back(row.time());
  }
  PairLevels levels;
  levels.fit = fit_pairs(samples, pairs.size(), used_points.size(), median(batch_noise));
  for (const auto& [key, data] : pairs) {
    const auto times = smallest.find(key);
    report.pairs.push_back({key.first, key.second, std::exp(levels.fit.level[data.index]),
                            levels.fit.samples[data.index], median(data.largest_busbw),
                            times == smallest.end() ? 0.0 : median(times->second.second)});
  }

  // The noise of one pair's level from its rows alone: a row's, shrunk for a median of as many
  // rows as the pair has (the pairs' median count).
  std::vector<double> counts;
  for (int n : levels.fit.samples) counts.push_back(n);
  levels.level_noise =
      levels.fit.within * per_median(static_cast<std::size_t>(std::max(1.0, median(counts))));
  // Without a measure of the rows' own noise (one row per pair and no per-iteration times) the
  // spread between pairs is all there is, and is taken at the upper end of its uncertainty.
  levels.unmeasured = !(levels.fit.within > 0);
  return levels;
}

// Hosts, each judged against the pairs it is not in: the median of its pairs' levels against
// the median of theirs, both medians' noise from the spread of a pair about its group (the
// host's pairs about their median, the others about theirs: two groups of pairs, like a
// two-sample test), never from a centre that the host's own slow pairs moved. Returns the hosts
// named.
std::set<Name> judge_hosts(const PairLevels& levels, const SuspectRule& rule,
                           const std::set<std::size_t>& explained, SuspectReport& report) {
  const std::size_t count = report.pairs.size();
  const bool exact = count <= kExactReferencePairs;
  std::map<Name, std::vector<std::size_t>> pairs_of;
  std::vector<std::size_t> unexplained;
  for (std::size_t i = 0; i < count; ++i) {
    if (explained.count(i)) continue;
    pairs_of[report.pairs[i].a].push_back(i);
    pairs_of[report.pairs[i].b].push_back(i);
    unexplained.push_back(i);
  }
  const double effect = min_effect_log(rule);
  std::set<Name> named;
  std::vector<double> all_levels = levels.of(unexplained);
  const double shared_median = exact ? 0 : median(all_levels);
  for (Name host : report.hosts) {
    const auto& mine = pairs_of[host];
    const std::vector<double> own = levels.of(mine);
    std::vector<double> ref;
    if (exact) {
      std::vector<std::size_t> others;
      for (auto i : unexplained) {
        if (report.pairs[i].a != host && report.pairs[i].b != host) others.push_back(i);
      }
      ref = levels.of(others);
    } else {
      ref = all_levels;
    }
    HostPairs h;
    h.host = host;
    h.pairs = static_cast<int>(own.size());
    std::vector<double> deviations;
    const double own_median = centre(own, deviations);
    const double ref_median = exact ? centre(ref, deviations) : shared_median;
    if (!exact) centre(ref, deviations);
    h.ratio = std::exp(own_median);
    if (static_cast<int>(ref.size()) >= rule.min_reference_pairs) {
      const double pair_spread = std::max(
          spread_of(deviations, static_cast<double>(deviations.size()) - 2, levels.unmeasured),
          levels.level_noise);
      const double noise = pair_spread * std::hypot(per_median(own.size()), per_median(ref.size()));
      const double margin = std::max(effect, rule.spread_factor * noise);
      h.reference = std::exp(ref_median);
      h.reference_spread = pair_spread;
      h.threshold = std::exp(ref_median - margin);
      // Most of its pairs must be slow by the minimum effect as well: that is what tells a bad
      // host from a bad link, which slows one pair of the host's N-1.
      h.slow_pairs = static_cast<int>(std::count_if(
          own.begin(), own.end(), [&](double l) { return l - ref_median < -effect; }));
      // Two pairs at least: a host seen in one pair cannot be told from its link.
      if (h.pairs >= 2 && own_median < ref_median - margin && 2 * h.slow_pairs > h.pairs) {
        named.insert(host);
        SuspectHost s;
        s.host = host;
        s.evidence = Evidence::kPairs;
        s.effect = 1 - std::exp(own_median - ref_median);
        s.reason = fmt::format(
            "pair evidence: {} of its {} pairs are slow; they ran at a median {} of the median "
            "of the other {} pairs (named below {}; spread of a pair {})",
            h.slow_pairs, h.pairs, percent_text(std::exp(own_median - ref_median)), ref.size(),
            percent_text(std::exp(-margin)), percent_text(pair_spread));
        report.suspects.push_back(std::move(s));
      }
    }
    report.host_pairs.push_back(h);
  }

  return named;
}

// Links between hosts not named, each judged against every other pair of good hosts: one pair's
// level against the median of theirs, with the spread of a pair about that median.
void judge_links(const PairLevels& levels, const std::set<Name>& named, const SuspectRule& rule,
                 const std::set<std::size_t>& explained, SuspectReport& report) {
  const std::size_t count = report.pairs.size();
  const bool exact = count <= kExactReferencePairs;
  const double effect = min_effect_log(rule);
  std::vector<std::size_t> good;
  for (std::size_t i = 0; i < count; ++i) {
    if (!explained.count(i) && !named.count(report.pairs[i].a) && !named.count(report.pairs[i].b))
      good.push_back(i);
  }
  double shared_good_median = 0, shared_good_spread = 0;
  if (!exact) {
    std::vector<double> deviations;
    shared_good_median = centre(levels.of(good), deviations);
    shared_good_spread =
        spread_of(deviations, static_cast<double>(deviations.size()) - 1, levels.unmeasured);
  }
  for (auto i : good) {
    const auto& p = report.pairs[i];
    std::size_t ref_pairs = good.size();
    double ref_median = shared_good_median, ref_spread = shared_good_spread;
    if (exact) {
      std::vector<std::size_t> others;
      for (auto j : good) {
        if (j != i) others.push_back(j);
      }
      std::vector<double> deviations;
      ref_median = centre(levels.of(others), deviations);
      ref_spread =
          spread_of(deviations, static_cast<double>(deviations.size()) - 1, levels.unmeasured);
      ref_pairs = others.size();
    }
    if (static_cast<int>(ref_pairs) < rule.min_reference_pairs) continue;
    const double pair_spread = std::max(ref_spread, levels.level_noise);
    const double noise = pair_spread * std::hypot(1.0, per_median(ref_pairs));
    const double margin = std::max(effect, rule.spread_factor * noise);
    const double shortfall = levels.fit.level[i] - ref_median;
    if (!(shortfall < -margin)) continue;
    // Most of its rows slow by the minimum effect, as a host needs most of its pairs: a pair
    // measured in one round has one row per placement, and one row that a busy moment slowed
    // four times is not a slow link while the row beside it ran as fast as the others.
    const auto& rows = levels.fit.rows[i];
    const auto slow_rows =
        std::count_if(rows.begin(), rows.end(), [&](double l) { return l - ref_median < -effect; });
    if (2 * static_cast<std::size_t>(slow_rows) <= rows.size()) continue;
    SlowLink link;
    link.a = p.a;
    link.b = p.b;
    link.ratio = std::exp(shortfall);
    link.effect = 1 - link.ratio;
    link.reason = fmt::format(
        "pair evidence: the pair ran at {} of the median of the other {} pairs (named below {}; "
        "spread of a pair {}); neither host is slow with its other pairs",
        percent_text(link.ratio), ref_pairs, percent_text(std::exp(-margin)),
        percent_text(pair_spread));
    report.links.push_back(std::move(link));
  }
}

// Uplinks, with a topology: for each switch with two measured hosts or more below it and a
// switch above, the pairs that cross its uplink (one host below, one outside) against the pairs
// that do not, like a host against the pairs it is not in. Named when they are slow beyond the
// spread of a pair (and most of them by the minimum effect) while the pairs of its own hosts are
// not: a slow host is slow with its neighbours too. Uplinks whose crossing pairs are the same
// pairs (two leaves under one spine) are one finding. Returns the pairs a named uplink explains.
std::set<std::size_t> judge_uplinks(const PairLevels& levels, const NetworkTopology& topology,
                                    const SuspectRule& rule, SuspectReport& report) {
  const std::size_t count = report.pairs.size();
  const double effect = min_effect_log(rule);
  // Every switch with its parent, from the hosts' paths.
  std::map<std::string, std::string> parent_of;
  for (Name h : report.hosts) {
    const auto it = topology.uplinks.find(h.str());
    if (it == topology.uplinks.end()) continue;
    for (std::size_t k = 0; k + 1 < it->second.size(); ++k) {
      parent_of.emplace(it->second[k], it->second[k + 1]);
    }
  }
  auto below = [&](Name host, const std::string& node) { return topology.below(host.str(), node); };
  std::set<std::size_t> explained;
  std::map<std::vector<std::size_t>, std::size_t> finding_of;  // crossing pairs -> finding
  for (const auto& [node, parent] : parent_of) {
    std::vector<std::size_t> crossing, inside, reference;
    for (std::size_t i = 0; i < count; ++i) {
      const bool a = below(report.pairs[i].a, node), b = below(report.pairs[i].b, node);
      if (a != b) {
        crossing.push_back(i);
      } else {
        reference.push_back(i);
        if (a) inside.push_back(i);
      }
    }
    if (crossing.size() < 2 || inside.empty() ||
        static_cast<int>(reference.size()) < rule.min_reference_pairs) {
      continue;
    }
    std::vector<double> deviations;
    const std::vector<double> own = levels.of(crossing);
    const double own_median = centre(own, deviations);
    const double ref_median = centre(levels.of(reference), deviations);
    const double pair_spread = std::max(
        spread_of(deviations, static_cast<double>(deviations.size()) - 2, levels.unmeasured),
        levels.level_noise);
    const double margin =
        std::max(effect, rule.spread_factor * pair_spread *
                             std::hypot(per_median(own.size()), per_median(reference.size())));
    const auto slow =
        std::count_if(own.begin(), own.end(), [&](double l) { return l - ref_median < -effect; });
    const double inside_median = median(levels.of(inside));
    if (!(own_median < ref_median - margin) || 2 * static_cast<std::size_t>(slow) <= own.size() ||
        inside_median < ref_median - margin) {
      continue;
    }
    explained.insert(crossing.begin(), crossing.end());
    if (const auto same = finding_of.find(crossing); same != finding_of.end()) {
      report.switches[same->second].alike.push_back(node);
      continue;
    }
    finding_of.emplace(crossing, report.switches.size());
    SlowSwitch s;
    s.node = node;
    s.parent = parent;
    s.pairs = static_cast<int>(crossing.size());
    s.ratio = std::exp(own_median - ref_median);
    s.effect = 1 - s.ratio;
    s.reason = fmt::format(
        "pair evidence: {} of the {} pairs across its uplink are slow; they ran at a median {} of "
        "the other {} pairs (named below {}; spread of a pair {}), while its own {} pairs ran at "
        "{}",
        slow, crossing.size(), percent_text(s.ratio), reference.size(),
        percent_text(std::exp(-margin)), percent_text(pair_spread), inside.size(),
        percent_text(std::exp(inside_median - ref_median)));
    report.switches.push_back(std::move(s));
  }
  return explained;
}

void pair_evidence(const ResultSet& set, const SuspectRule& rule, const NetworkTopology* topology,
                   SuspectReport& report) {
  const auto used_points = pair_points(set, rule, report);
  const PairLevels levels = fit_pair_levels(set, used_points, report);
  const std::set<std::size_t> explained =
      topology ? judge_uplinks(levels, *topology, rule, report) : std::set<std::size_t>{};
  const std::set<Name> named = judge_hosts(levels, rule, explained, report);
  judge_links(levels, named, rule, explained, report);
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
        s.slowest, s.rows, percent_text(s.share()), percent_text(s.chance), s.p_value,
        percent_text(s.median_excess));
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

SuspectReport find_suspects(const ResultSet& set, const SuspectRule& rule,
                            const NetworkTopology* topology) {
  SuspectReport report;
  pair_evidence(set, rule, topology, report);
  straggler_evidence(set, rule, report);
  std::stable_sort(report.suspects.begin(), report.suspects.end(),
                   [](const SuspectHost& a, const SuspectHost& b) {
                     return a.effect != b.effect ? a.effect > b.effect : a.host < b.host;
                   });
  std::stable_sort(report.links.begin(), report.links.end(),
                   [](const SlowLink& a, const SlowLink& b) { return a.effect > b.effect; });
  std::stable_sort(report.switches.begin(), report.switches.end(),
                   [](const SlowSwitch& a, const SlowSwitch& b) { return a.effect > b.effect; });
  return report;
}

SuspectsRecord suspects_record(const SuspectReport& report) {
  SuspectsRecord record;
  for (const auto& s : report.suspects) {
    // Pair evidence's effect is a shortfall (ratio 1 - effect); a straggler's an excess of time.
    const double ratio = s.evidence == Evidence::kStragglers ? 1 / (1 + s.effect) : 1 - s.effect;
    record.hosts.push_back({s.host.str(), std::string(name(s.evidence)), ratio, s.reason});
  }
  for (const auto& l : report.links)
    record.links.push_back({l.a.str(), l.b.str(), l.ratio, l.reason});
  for (const auto& w : report.switches)
    record.switches.push_back({w.node, w.parent, w.alike, w.ratio, w.reason});
  return record;
}

std::string suspects_text(const SuspectReport& report) {
  return suspects_text(suspects_record(report));
}

}  // namespace collbench::report
