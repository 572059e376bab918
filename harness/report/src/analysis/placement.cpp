// The placement verdict (see collbench/report/placement.h).
#include "collbench/report/placement.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

#include "collbench/stats.h"
#include "collbench/text.h"

namespace collbench::report {

std::string level_words(int level) {
  if (level == 1) return "the same leaf switch (level 1)";
  return fmt::format("a level-{} switch", level);
}

std::optional<PlacementRecord> placement_record(const PlacementVerdict& verdict) {
  if (verdict.levels.empty()) return std::nullopt;
  return PlacementRecord{verdict.source,
                         verdict.reference_level,
                         {verdict.levels.begin(), verdict.levels.end()},
                         {verdict.switches.begin(), verdict.switches.end()},
                         verdict.missing_hosts};
}

PlacementVerdict placement_verdict(const SuspectReport& report, const NetworkTopology& topology) {
  PlacementVerdict v;
  v.source = topology.source;
  std::vector<std::string> hosts;
  for (Name h : report.hosts) hosts.push_back(h.str());
  v.missing_hosts = topology.missing(hosts);
  v.host_order = hosts;
  auto top_down = [&](const std::string& h) {
    const auto it = topology.uplinks.find(h);
    std::vector<std::string> key;
    if (it != topology.uplinks.end()) key.assign(it->second.rbegin(), it->second.rend());
    return key;
  };
  std::stable_sort(v.host_order.begin(), v.host_order.end(),
                   [&](const std::string& a, const std::string& b) {
                     const bool placed_a = topology.uplinks.count(a) > 0;
                     const bool placed_b = topology.uplinks.count(b) > 0;
                     if (placed_a != placed_b) return placed_a;
                     if (!placed_a) return false;  // missing hosts keep their order, last
                     return std::pair(top_down(a), a) < std::pair(top_down(b), b);
                   });

  struct Samples {
    std::vector<double> ratio, busbw, latency;
  };
  std::map<int, Samples> by_level;
  std::map<std::pair<int, std::string>, Samples> by_switch;
  for (const PairStat& p : report.pairs) {
    const auto common = topology.common(p.a.view(), p.b.view());
    if (!common) {
      // A missing host is named once; a pair of placed hosts in two trees is counted.
      if (topology.uplinks.count(p.a.str()) && topology.uplinks.count(p.b.str())) {
        ++v.unconnected_pairs;
      }
      continue;
    }
    ++v.pairs;
    for (Samples* s : {&by_level[common->level], &by_switch[{common->level, common->node}]}) {
      s->ratio.push_back(p.ratio);
      s->busbw.push_back(p.busbw);
      if (p.latency_us > 0) s->latency.push_back(p.latency_us);
    }
  }
  if (by_level.empty()) return v;
  v.reference_level = by_level.begin()->first;
  const double reference = median(by_level.begin()->second.ratio);
  const auto& reference_latency = by_level.begin()->second.latency;
  const double latency_reference = reference_latency.empty() ? 0 : median(reference_latency);
  auto group = [&](int level, std::string node, const Samples& s) {
    PlacementGroup g;
    g.level = level;
    g.node = std::move(node);
    g.pairs = static_cast<int>(s.ratio.size());
    g.ratio = median(s.ratio);
    g.busbw_gbps = median(s.busbw);
    g.relative = reference > 0 ? g.ratio / reference : 0;
    if (!s.latency.empty()) g.latency_us = median(s.latency);
    if (g.latency_us > 0 && latency_reference > 0)
      g.latency_relative = g.latency_us / latency_reference;
    return g;
  };
  for (const auto& [level, s] : by_level) v.levels.push_back(group(level, "", s));
  for (const auto& [key, s] : by_switch) {
    if (key.first > v.reference_level) v.switches.push_back(group(key.first, key.second, s));
  }
  return v;
}

std::vector<std::string> PlacementVerdict::sentences() const {
  std::vector<std::string> out;
  if (levels.empty()) {
    out.push_back(pairs == 0 && !missing_hosts.empty()
                      ? fmt::format("no pair of hosts in {} was measured", source)
                      : "no node pairs to place (collbench --split pairs or sample measures them)");
  } else if (levels.size() == 1) {
    out.push_back(
        fmt::format("every measured pair meets at {} ({} pairs): the topology ({}) "
                    "gives nothing to compare",
                    level_words(levels[0].level), levels[0].pairs, source));
  }
  const PlacementGroup* ref = levels.empty() ? nullptr : &levels.front();
  for (std::size_t i = 1; i < levels.size(); ++i) {
    const auto& g = levels[i];
    out.push_back(
        fmt::format("pairs meeting at {} run at {} of pairs on {} (median of {} pairs against {})",
                    level_words(g.level), whole_percent(g.relative), level_words(ref->level),
                    g.pairs, ref->pairs));
  }
  if (levels.size() > 1) {
    // Each switch of a level only where the level has several: with one spine its line would
    // say again what the level's line said.
    std::map<int, int> switches_at;
    for (const auto& g : switches) ++switches_at[g.level];
    for (const auto& g : switches) {
      if (switches_at[g.level] < 2) continue;
      out.push_back(fmt::format(
          "pairs meeting at {} (level {}) run at {} of pairs on {} "
          "(median of {} pairs)",
          g.node, g.level, whole_percent(g.relative), level_words(ref->level), g.pairs));
    }
  }
  if (!missing_hosts.empty()) {
    out.push_back(fmt::format("not in {} (their pairs are left out, never guessed): {}", source,
                              fmt::join(missing_hosts, ", ")));
  }
  if (unconnected_pairs > 0) {
    out.push_back(fmt::format("{} pairs share no switch in {}", unconnected_pairs, source));
  }
  return out;
}

}  // namespace collbench::report
