#include "collbench/report/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "collbench/sizes.h"
#include "internal.h"

namespace collbench::report {

std::string_view name(Verdict verdict) {
  switch (verdict) {
    case Verdict::kSame:
      return "same";
    case Verdict::kNoise:
      return "within noise";
    case Verdict::kRegression:
      return "regression";
    case Verdict::kImprovement:
      return "improvement";
  }
  return "?";
}

namespace {

std::set<std::string> values_of(const Model& model, Dim d) {
  std::set<std::string> values;
  for (const auto& s : model.series) values.insert(model.configs[s.config].value(d));
  return values;
}

// Two-sided 95% Student t quantiles for 1..30 degrees of freedom; 1.96 beyond.
double t_quantile_95(int df) {
  static constexpr double kT[] = {12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306,
                                  2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120,
                                  2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
                                  2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
  if (df < 1) return std::numeric_limits<double>::infinity();
  return df <= 30 ? kT[df - 1] : 1.96;
}

}  // namespace

bool beyond_repeat_spread(const Point& fast, const Point& slow) {
  // One run per side: nothing to weigh, the within-run rule alone decides.
  if (fast.repeats < 2 || slow.repeats < 2) return true;
  // Welch's test on the runs' headline times: the difference of the means against its standard
  // error, with the conservative min(n) − 1 degrees of freedom, since few runs say little about
  // their spread.
  auto variance_of_mean = [](const Point& p) {
    const double sd = p.repeat_cv * p.repeat_mean_us;
    return sd * sd / p.repeats;
  };
  const double se = std::sqrt(variance_of_mean(fast) + variance_of_mean(slow));
  const int df = std::min(fast.repeats, slow.repeats) - 1;
  return slow.repeat_mean_us - fast.repeat_mean_us > t_quantile_95(df) * se;
}

namespace {

double ratio_of(const Point& base, const Point& cand) {
  if (base.busbw > 0 && cand.busbw > 0) return cand.busbw / base.busbw;
  if (base.time_us > 0 && cand.time_us > 0) return base.time_us / cand.time_us;
  return 1;
}

Verdict judge(const Point& base, const Point& cand, double ratio, double threshold) {
  const bool spread = base.has_spread && cand.has_spread;
  if (ratio < 1 - threshold) {
    // The candidate's best iteration must be slower than the baseline's typical one, and its
    // runs slower than the baseline's beyond their run-to-run spread.
    return (!spread || cand.time_min > base.time_p50) && beyond_repeat_spread(base, cand)
               ? Verdict::kRegression
               : Verdict::kNoise;
  }
  if (ratio > 1 + threshold) {
    return (!spread || base.time_min > cand.time_p50) && beyond_repeat_spread(cand, base)
               ? Verdict::kImprovement
               : Verdict::kNoise;
  }
  return Verdict::kSame;
}

std::string full_name(const Config& c) {
  return fmt::format("{} · {} × {}", c.backend, nodes_text(c.nodes), ranks_text(c.nranks));
}

}  // namespace

Comparison compare(const Model& baseline, const Model& candidate, const CompareOptions& options) {
  Comparison out;
  out.threshold = options.threshold;
  for (Dim d : kAllDims) {
    if (std::find(options.ignore.begin(), options.ignore.end(), d) != options.ignore.end())
      continue;
    const auto b = values_of(baseline, d);
    const auto c = values_of(candidate, d);
    if (d == Dim::kBuffers && b.size() == 1 && c.size() == 1 && b != c) {
      // Warm and cold caches are different measurements, not two sides of one: the policy stays
      // a matching dimension, so these series go unmatched, and the reader is told why.
      out.warnings.push_back(fmt::format(
          "the baseline ran with buffers {} and the candidate with buffers {}: their series are "
          "not compared (--match-ignore buffers compares them anyway)",
          *b.begin(), *c.begin()));
      out.match_dims.push_back(d);
    } else if (b.size() == 1 && c.size() == 1 && b != c) {
      out.side_dims.push_back(d);
    } else {
      out.match_dims.push_back(d);
    }
  }
  if (std::find(options.ignore.begin(), options.ignore.end(), Dim::kBuffers) !=
      options.ignore.end()) {
    auto policies = values_of(baseline, Dim::kBuffers);
    const auto more = values_of(candidate, Dim::kBuffers);
    policies.insert(more.begin(), more.end());
    if (policies.size() > 1) {
      out.warnings.push_back(
          "buffers ignored: series measured with rotating and with fixed buffers are compared, "
          "and their differences include the cache effect of the policy");
    }
  }
  // Names use the matching dimensions that actually differ between configurations.
  std::vector<Dim> naming;
  for (Dim d : out.match_dims) {
    auto values = values_of(baseline, d);
    const auto more = values_of(candidate, d);
    values.insert(more.begin(), more.end());
    if (values.size() > 1) naming.push_back(d);
  }
  auto config_name = [&naming](const Config& c) {
    return naming.empty() ? full_name(c) : describe(c, naming);
  };
  auto key_of = [&](const Model& m, const Series& s) {
    std::string key;
    for (Dim d : out.match_dims) key += m.configs[s.config].value(d) + '\x1f';
    return key + s.test + '\x1f' + s.dtype + '\x1f' + s.op + '\x1f' + s.placement;
  };
  auto sizes_of = [](const Series& s) {
    std::vector<std::uint64_t> sizes;
    for (const auto& p : s.points) sizes.push_back(p.bytes);
    return sizes;
  };
  auto unmatched_series = [&](const Model& m, const Series& s, bool in_baseline) {
    out.unmatched.push_back({in_baseline, config_name(m.configs[s.config]), s.test, s.dtype, s.op,
                             s.placement, sizes_of(s), true});
  };

  std::map<std::string, int> base_by_key;
  for (std::size_t i = 0; i < baseline.series.size(); ++i) {
    if (!base_by_key.emplace(key_of(baseline, baseline.series[i]), static_cast<int>(i)).second) {
      // Two baseline series collapse onto one key once dimensions are ignored: not comparable.
      unmatched_series(baseline, baseline.series[i], true);
    }
  }
  std::set<int> used;
  std::set<std::string> candidate_keys;
  for (std::size_t ci = 0; ci < candidate.series.size(); ++ci) {
    const Series& cs = candidate.series[ci];
    const std::string key = key_of(candidate, cs);
    const auto it = base_by_key.find(key);
    if (it == base_by_key.end() || !candidate_keys.insert(key).second) {
      unmatched_series(candidate, cs, false);
      continue;
    }
    used.insert(it->second);
    const Series& bs = baseline.series[it->second];
    Comparison::SeriesPair pair{config_name(candidate.configs[cs.config]),
                                cs.test,
                                cs.dtype,
                                cs.op,
                                cs.placement,
                                it->second,
                                static_cast<int>(ci),
                                {}};
    std::vector<std::uint64_t> only_base, only_cand;
    std::size_t i = 0, j = 0;
    while (i < bs.points.size() || j < cs.points.size()) {
      if (j == cs.points.size() ||
          (i < bs.points.size() && bs.points[i].bytes < cs.points[j].bytes)) {
        only_base.push_back(bs.points[i++].bytes);
      } else if (i == bs.points.size() || cs.points[j].bytes < bs.points[i].bytes) {
        only_cand.push_back(cs.points[j++].bytes);
      } else {
        MatchedPoint m;
        m.config = pair.config;
        m.test = cs.test;
        m.dtype = cs.dtype;
        m.op = cs.op;
        m.placement = cs.placement;
        m.bytes = cs.points[j].bytes;
        m.baseline = bs.points[i];
        m.candidate = cs.points[j];
        m.baseline.rows.clear();
        m.candidate.rows.clear();
        m.ratio = ratio_of(m.baseline, m.candidate);
        m.verdict = judge(m.baseline, m.candidate, m.ratio, options.threshold);
        switch (m.verdict) {
          case Verdict::kRegression:
            ++out.regressions;
            break;
          case Verdict::kImprovement:
            ++out.improvements;
            break;
          case Verdict::kNoise:
            ++out.noise;
            break;
          case Verdict::kSame:
            break;
        }
        pair.points.push_back(out.matched.size());
        out.matched.push_back(std::move(m));
        ++i;
        ++j;
      }
    }
    if (!only_base.empty()) {
      out.unmatched.push_back(
          {true, pair.config, cs.test, cs.dtype, cs.op, cs.placement, only_base, false});
    }
    if (!only_cand.empty()) {
      out.unmatched.push_back(
          {false, pair.config, cs.test, cs.dtype, cs.op, cs.placement, only_cand, false});
    }
    out.pairs.push_back(std::move(pair));
  }
  for (const auto& [key, index] : base_by_key) {
    if (!used.count(index)) unmatched_series(baseline, baseline.series[index], true);
  }
  return out;
}

namespace {

std::vector<const Comparison::SeriesPair*> pairs_for(const Comparison& c, const TestView& view) {
  std::vector<const Comparison::SeriesPair*> pairs;
  for (const auto& p : c.pairs) {
    if (p.test == view.test && p.dtype == view.dtype && p.op == view.op &&
        p.placement == view.placement) {
      pairs.push_back(&p);
    }
  }
  return pairs;
}

/// Splits the `count` configuration pairs into panels of at most `limit` (titled "k–m of n" when
/// there are several), `add(i, panel)` adding pair i's series; several panels go two to a row.
template <typename AddPair>
void fill_pair_panels(Chart& chart, std::size_t count, std::size_t limit, AddPair add) {
  for (std::size_t k = 0; k < count; k += limit) {
    Panel panel;
    if (count > limit)
      panel.title = fmt::format("{}–{} of {}", k + 1, std::min(count, k + limit), count);
    for (std::size_t i = k; i < std::min(count, k + limit); ++i) add(i, panel);
    chart.panels.push_back(std::move(panel));
  }
  if (chart.panels.size() > 1) {
    chart.columns = 2;
    chart.panel_width = 480;
    chart.panel_height = 290;
  }
}

}  // namespace

std::optional<Chart> ratio_chart(const Comparison& comparison, const Model& baseline,
                                 const TestView& view, const ChartOptions& options) {
  (void)baseline;
  const auto pairs = pairs_for(comparison, view);
  if (pairs.empty()) return std::nullopt;
  Chart chart;
  chart.id = "ratio-" + view.file_key;
  chart.title = fmt::format("{}: candidate / baseline bus bandwidth", view.test);
  chart.subtitle = fmt::format("{} · {} · above 1: candidate faster · ringed: regression",
                               view.dtype, view.placement);
  chart.x = {AxisScale::kLog2, AxisFormat::kBytes, "message size (bytes, log2 scale)", {}, true};
  chart.y = {AxisScale::kLinear, AxisFormat::kNumber, "ratio (candidate / baseline)", {}, false};
  const double t = comparison.threshold;
  chart.references.push_back({1.0, 1 - t, 1 + t, fmt::format("±{:g}% threshold", 100 * t)});
  const std::size_t limit = static_cast<std::size_t>(std::max(1, options.max_series_per_panel));
  fill_pair_panels(chart, pairs.size(), limit, [&](std::size_t i, Panel& panel) {
    ChartSeries cs;
    cs.name = pairs[i]->config;
    cs.style = static_cast<int>(i);
    for (std::size_t index : pairs[i]->points) {
      const MatchedPoint& m = comparison.matched[index];
      ChartPoint cp;
      cp.x = static_cast<double>(m.bytes);
      cp.y = m.ratio;
      cp.flagged = m.verdict == Verdict::kRegression;
      cp.title = fmt::format("{}\n{}: {}× ({})\nbaseline {} GB/s, candidate {} GB/s", cs.name,
                             format_bytes(m.bytes), format_sig(m.ratio), name(m.verdict),
                             detail::busbw_text(m.baseline), detail::busbw_text(m.candidate));
      cs.points.push_back(std::move(cp));
    }
    panel.series.push_back(std::move(cs));
  });
  for (std::size_t i = 0; i < pairs.size(); ++i)
    chart.legend.push_back({pairs[i]->config, static_cast<int>(i), "", false});
  chart.legend.push_back({fmt::format("±{:g}% threshold", 100 * t), 0, "", true});
  return chart;
}

std::optional<Chart> overlay_chart(const Comparison& comparison, const Model& baseline,
                                   const Model& candidate, const TestView& view,
                                   const ChartOptions& options) {
  const auto pairs = pairs_for(comparison, view);
  if (pairs.empty()) return std::nullopt;
  Chart chart;
  chart.id = "overlay-" + view.file_key;
  chart.title = fmt::format("{}: baseline (dashed) and candidate (solid)", view.test);
  chart.subtitle = fmt::format("{} · {} · headline bus bandwidth", view.dtype, view.placement);
  chart.x = {AxisScale::kLog2, AxisFormat::kBytes, "message size (bytes, log2 scale)", {}, true};
  chart.y = {options.log_y ? AxisScale::kLog10 : AxisScale::kLinear,
             AxisFormat::kNumber,
             "bus bandwidth (GB/s)",
             {},
             true};
  // Two lines per configuration: half as many configurations per panel.
  const std::size_t limit = static_cast<std::size_t>(std::max(1, options.max_series_per_panel / 2));
  fill_pair_panels(chart, pairs.size(), limit, [&](std::size_t i, Panel& panel) {
    for (int side = 0; side < 2; ++side) {
      const Model& m = side == 0 ? baseline : candidate;
      const Series& s = m.series[side == 0 ? pairs[i]->baseline : pairs[i]->candidate];
      ChartSeries cs;
      cs.name = fmt::format("{} ({})", pairs[i]->config, side == 0 ? "baseline" : "candidate");
      cs.style = static_cast<int>(i);
      cs.dash = side == 0 ? "7 4" : "solid";
      for (const auto& p : s.points) {
        if (!p.has_busbw) continue;  // the ratio chart still has it, from the times
        ChartPoint cp;
        cp.x = static_cast<double>(p.bytes);
        cp.y = p.busbw;
        cp.title = fmt::format("{}\n{}: {} GB/s, {} µs", cs.name, format_bytes(p.bytes),
                               format_sig(p.busbw), format_sig(p.time_us));
        cs.points.push_back(std::move(cp));
      }
      panel.series.push_back(std::move(cs));
    }
  });
  for (std::size_t i = 0; i < pairs.size(); ++i)
    chart.legend.push_back({pairs[i]->config, static_cast<int>(i), "solid", false});
  chart.legend.push_back({"baseline", 6, "7 4", false});
  chart.legend.push_back({"candidate", 6, "solid", false});
  return chart;
}

}  // namespace collbench::report
