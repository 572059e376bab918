#include "collbench/report/model.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <unordered_map>

namespace collbench::report {

std::string_view name(Dim dim) {
  switch (dim) {
    case Dim::kVariant:
      return "variant";
    case Dim::kPartition:
      return "partition";
    case Dim::kBackend:
      return "backend";
    case Dim::kNodes:
      return "nodes";
    case Dim::kRanks:
      return "ranks";
    case Dim::kMode:
      return "mode";
    case Dim::kBuffers:
      return "buffers";
  }
  return "?";
}

std::string count_text(int value) { return stated(value) ? std::to_string(value) : "?"; }

std::string nodes_text(int nodes) {
  return fmt::format("{} node{}", count_text(nodes), nodes == 1 ? "" : "s");
}

std::string ranks_text(int nranks) { return fmt::format("{} ranks", count_text(nranks)); }

std::string Config::value(Dim dim) const {
  switch (dim) {
    case Dim::kVariant:
      return variant;
    case Dim::kPartition:
      return partition;
    case Dim::kBackend:
      return backend;
    case Dim::kNodes:
      return count_text(nodes);
    case Dim::kRanks:
      return count_text(nranks);
    case Dim::kMode:
      return std::string(collbench::name(mode));
    case Dim::kBuffers:
      return std::string(collbench::name(buffers));
  }
  return "";
}

std::optional<std::size_t> known_test(std::string_view test) {
  for (std::size_t i = 0; i < std::size(kKnownTests); ++i) {
    if (kKnownTests[i] == test) return i;
  }
  return std::nullopt;
}

int test_order(std::string_view test) {
  return static_cast<int>(known_test(test).value_or(std::size(kKnownTests)));
}

std::optional<SeriesFigures::Fit> fit_latency_bandwidth(const std::vector<std::uint64_t>& bytes,
                                                        const std::vector<double>& time_us) {
  double scale = 1;
  for (auto b : bytes) scale = std::max(scale, static_cast<double>(b));
  // Weighted least squares with w = 1/t²: the residuals that count are relative ones, so the
  // latency-bound small sizes pin α as firmly as the large sizes pin β.
  double sw = 0, sb = 0, sbb = 0, st = 0, sbt = 0;
  int n = 0;
  for (std::size_t i = 0; i < bytes.size() && i < time_us.size(); ++i) {
    const double t = time_us[i];
    if (!(t > 0) || !std::isfinite(t)) continue;
    const double b = static_cast<double>(bytes[i]) / scale;  // scaled for conditioning
    const double w = 1.0 / (t * t);
    sw += w;
    sb += w * b;
    sbb += w * b * b;
    st += w * t;
    sbt += w * b * t;
    ++n;
  }
  if (n < 3) return std::nullopt;
  const double det = sw * sbb - sb * sb;
  if (!(std::abs(det) > 0)) return std::nullopt;
  const double slope = (sw * sbt - sb * st) / det;  // µs per scaled byte
  if (!(slope > 0)) return std::nullopt;
  SeriesFigures::Fit fit;
  fit.alpha_us = (st - slope * sb) / sw;
  const double us_per_byte = slope / scale;
  fit.beta_gbps = 1e-3 / us_per_byte;  // bytes/µs = 1e6 B/s = 1e-3 GB/s
  double sum_sq = 0;
  for (std::size_t i = 0; i < bytes.size() && i < time_us.size(); ++i) {
    const double t = time_us[i];
    if (!(t > 0) || !std::isfinite(t)) continue;
    const double model = fit.alpha_us + static_cast<double>(bytes[i]) * us_per_byte;
    sum_sq += (t - model) * (t - model) / (t * t);
  }
  fit.rms_relative = std::sqrt(sum_sq / n);
  fit.points = n;
  return fit;
}

SeriesFigures compute_figures(const std::vector<Point>& points) {
  SeriesFigures f;
  if (points.empty()) return f;
  f.has_busbw =
      std::any_of(points.begin(), points.end(), [](const Point& p) { return p.has_busbw; });
  for (const auto& p : points) {
    if (p.busbw > f.peak_busbw) {
      f.peak_busbw = p.busbw;
      f.peak_bytes = p.bytes;
    }
  }
  if (f.peak_bytes == 0 && f.peak_busbw == 0) f.peak_bytes = points.front().bytes;
  for (const auto& p : points) {
    if (f.peak_busbw > 0 && p.busbw >= f.peak_busbw / 2) {
      f.n_half = p.bytes;
      break;
    }
  }
  f.largest_bytes = points.back().bytes;
  f.largest_busbw = points.back().busbw;
  f.smallest_bytes = points.front().bytes;
  f.smallest_time_us = points.front().time_us;
  for (const auto& p : points) {
    if (p.bytes == 8) {
      f.smallest_bytes = 8;
      f.smallest_time_us = p.time_us;
    }
  }
  auto at = [&points](std::uint64_t target) -> std::optional<SeriesFigures::At> {
    for (std::size_t i = 0; i < points.size(); ++i) {
      if (points[i].bytes == target) return SeriesFigures::At{points[i].busbw, false};
      if (i + 1 < points.size() && points[i].bytes < target && target < points[i + 1].bytes &&
          points[i].bytes > 0) {
        const double x0 = std::log2(static_cast<double>(points[i].bytes));
        const double x1 = std::log2(static_cast<double>(points[i + 1].bytes));
        const double x = std::log2(static_cast<double>(target));
        const double v =
            points[i].busbw + (points[i + 1].busbw - points[i].busbw) * (x - x0) / (x1 - x0);
        return SeriesFigures::At{v, true};
      }
    }
    return std::nullopt;
  };
  f.at_1m = at(std::uint64_t{1} << 20);
  f.at_64m = at(std::uint64_t{64} << 20);
  f.at_1g = at(std::uint64_t{1} << 30);

  std::vector<std::uint64_t> bytes;
  std::vector<double> times;
  for (const auto& p : points) {
    if (p.bytes == 0) continue;
    bytes.push_back(p.bytes);
    times.push_back(p.time_us);
  }
  f.fit = fit_latency_bandwidth(bytes, times);
  if (f.fit && !f.has_busbw) {
    f.fit->beta_bus_gbps = std::numeric_limits<double>::quiet_NaN();  // no bus factor known
  } else if (f.fit) {
    // busbw/algbw is the test's bus factor (constant for a series); take it from the largest
    // size where both are non-zero.
    double factor = 1;
    for (auto it = points.rbegin(); it != points.rend(); ++it) {
      if (it->algbw > 0 && it->busbw > 0) {
        factor = it->busbw / it->algbw;
        break;
      }
    }
    f.fit->beta_bus_gbps = f.fit->beta_gbps * factor;
  }
  return f;
}

namespace {

// A configuration key in a form that sorts naturally (numbers as numbers).
using ConfigKey =
    std::tuple<std::string, std::string, std::string, int, int, std::string, std::string>;

ConfigKey key_of(const Config& c) {
  return {c.variant,
          c.partition,
          c.backend,
          c.nodes,
          c.nranks,
          std::string(name(c.mode)),
          std::string(name(c.buffers))};
}

}  // namespace

std::string describe(const Config& c, const std::vector<Dim>& varying) {
  std::vector<std::string> parts;
  const bool nodes = std::find(varying.begin(), varying.end(), Dim::kNodes) != varying.end();
  const bool ranks = std::find(varying.begin(), varying.end(), Dim::kRanks) != varying.end();
  for (Dim d : varying) {
    switch (d) {
      case Dim::kNodes:
        parts.push_back(nodes_text(c.nodes));
        break;
      case Dim::kRanks:
        if (!nodes) parts.push_back(ranks_text(c.nranks));
        break;
      case Dim::kBuffers:
        parts.push_back("buffers " + c.value(Dim::kBuffers));
        break;
      default:
        parts.push_back(c.value(d).empty() ? "(none)" : c.value(d));
    }
  }
  if (nodes && ranks) {
    // "2 nodes × 16 ranks" reads better than two separate items.
    for (auto& p : parts) {
      if (p.find(" node") != std::string::npos) p += " × " + ranks_text(c.nranks);
    }
  }
  if (parts.empty()) {
    parts.push_back(c.backend);
    parts.push_back(nodes_text(c.nodes) + " × " + ranks_text(c.nranks));
    if (!c.variant.empty()) parts.push_back(c.variant);
  }
  std::string name;
  for (const auto& p : parts) name += (name.empty() ? "" : " · ") + p;
  return name;
}

namespace {

int parse_int_label(const std::string* value, int fallback) {
  if (!value || value->empty()) return fallback;
  char* end = nullptr;
  const long v = std::strtol(value->c_str(), &end, 10);
  return (end && *end == '\0' && v > 0 && v < (1 << 30)) ? static_cast<int>(v) : fallback;
}

// Room for the values of one point's rows, used again for every point: a million rows make
// some hundred thousand points, and fresh vectors for each were a third of the model's time.
struct PointScratch {
  std::vector<double> busbw, algbw, time, p50, bw_p50;
  struct RunValue {
    Name run;
    double time = 0;
    std::optional<double> busbw;
  };
  std::vector<RunValue> by_run;
  std::vector<double> run_times, run_busbws, times, busbws;
};

// Each run's headline at this size (the median of its rows: point-to-point tests have one row per
// pair), then the spread of those between runs, the runs in the order of their ids.
void merge_repeats(const std::vector<const ReadRow*>& rows, Point& p, PointScratch& scratch) {
  auto& by_run = scratch.by_run;
  by_run.clear();
  for (const ReadRow* r : rows) {
    by_run.push_back(
        {r->run_id, r->time(), r->busbw_gbps ? std::optional(*r->busbw_gbps) : std::nullopt});
  }
  std::stable_sort(by_run.begin(), by_run.end(),
                   [](const auto& a, const auto& b) { return a.run < b.run; });
  auto& times = scratch.times;
  auto& busbws = scratch.busbws;
  times.clear();
  busbws.clear();
  for (std::size_t i = 0; i < by_run.size();) {
    scratch.run_times.clear();
    scratch.run_busbws.clear();
    std::size_t j = i;
    for (; j < by_run.size() && by_run[j].run == by_run[i].run; ++j) {
      scratch.run_times.push_back(by_run[j].time);
      if (by_run[j].busbw) scratch.run_busbws.push_back(*by_run[j].busbw);
    }
    times.push_back(median_in_place(scratch.run_times));
    if (!scratch.run_busbws.empty()) busbws.push_back(median_in_place(scratch.run_busbws));
    i = j;
  }
  p.repeats = static_cast<int>(times.size());
  if (p.repeats < 2) return;
  double sum = 0;
  for (double t : times) sum += t;
  const double n = static_cast<double>(times.size());
  p.repeat_mean_us = sum / n;
  double squares = 0;
  for (double t : times) squares += (t - p.repeat_mean_us) * (t - p.repeat_mean_us);
  p.repeat_cv = p.repeat_mean_us > 0 ? std::sqrt(squares / (n - 1)) / p.repeat_mean_us : 0;
  const auto [tmin, tmax] = std::minmax_element(times.begin(), times.end());
  p.repeat_time_min = *tmin;
  p.repeat_time_max = *tmax;
  if (busbws.size() == times.size()) {
    const auto [bmin, bmax] = std::minmax_element(busbws.begin(), busbws.end());
    p.repeat_busbw_low = *bmin;
    p.repeat_busbw_high = *bmax;
  }
}

Point merge_rows(const std::vector<const ReadRow*>& rows, PointScratch& scratch) {
  Point p;
  p.bytes = rows.front()->bytes;
  p.samples = static_cast<int>(rows.size());
  auto& busbw = scratch.busbw;
  auto& algbw = scratch.algbw;
  auto& time = scratch.time;
  auto& p50 = scratch.p50;
  auto& bw_p50 = scratch.bw_p50;
  for (auto* v : {&busbw, &algbw, &time, &p50, &bw_p50}) v->clear();
  double tmin = 0, tp99 = 0, bw_low = 0, bw_high = 0;
  bool first_spread = true;
  for (const ReadRow* r : rows) {
    if (r->busbw_gbps) busbw.push_back(*r->busbw_gbps);
    algbw.push_back(r->algbw());
    time.push_back(r->time());
    if (!r->time_us) continue;
    const Summary& it = r->time_us->per_iteration;
    if (it.n == 0 || !(it.min > 0) || !(it.p50 > 0) || !(it.p99 > 0)) continue;
    // The row's own bytes×factor: busbw_at(t) = busbw × reported / t.
    const double k = r->busbw() * r->time();
    p50.push_back(it.p50);
    bw_p50.push_back(k / it.p50);
    if (first_spread) {
      tmin = it.min;
      tp99 = it.p99;
      bw_low = k / it.p99;
      bw_high = k / it.min;
      first_spread = false;
    } else {
      tmin = std::min(tmin, it.min);
      tp99 = std::max(tp99, it.p99);
      bw_low = std::min(bw_low, k / it.p99);
      bw_high = std::max(bw_high, k / it.min);
    }
  }
  merge_repeats(rows, p, scratch);
  p.algorithm = merge_algorithms(rows);
  p.has_busbw = !busbw.empty();
  p.busbw = median_in_place(busbw);
  p.algbw = median_in_place(algbw);
  p.time_us = median_in_place(time);
  if (!p50.empty()) {
    p.has_spread = true;
    p.time_p50 = median_in_place(p50);
    p.time_min = tmin;
    p.time_p99 = tp99;
    p.busbw_p50 = median_in_place(bw_p50);
    p.busbw_low = bw_low;
    p.busbw_high = bw_high;
  }
  return p;
}

// The configuration a row belongs to (without its runs and name).
Config config_of(const ResultSet& set, const ReadRow& r) {
  Config c;
  const std::string* variant = r.labels.find("variant");
  c.variant = variant ? *variant : set.file_stems[r.file];
  if (const std::string* partition = r.labels.find("partition")) {
    c.partition = *partition;
  } else if (const auto ctx = set.contexts.find(r.run_id); ctx != set.contexts.end()) {
    const auto& slurm = ctx->second.context.slurm;
    if (slurm && slurm->partition) c.partition = *slurm->partition;
  }
  c.backend = r.backend.str();
  c.mode = r.mode;
  c.buffers = measured_point(r).buffers;
  c.nodes = parse_int_label(r.labels.find("nodes"), r.nodes);
  c.nranks = r.nranks;
  return c;
}

// Picks the value to show: the requested one when present, else `preferred`, else the most
// common one.
std::string choose(const std::map<std::string, std::uint64_t>& counts, const std::string& requested,
                   const std::string& preferred) {
  if (!requested.empty() && counts.count(requested)) return requested;
  if (counts.count(preferred)) return preferred;
  std::string best;
  std::uint64_t most = 0;
  for (const auto& [value, n] : counts) {
    if (n > most) {
      best = value;
      most = n;
    }
  }
  return best;
}

}  // namespace

namespace {

// 1. Configurations: every row's (model.row_config), in natural order, and the dimensions that
// vary between them. Rows of one run share labels, so a one-entry cache keyed by what the
// configuration depends on makes this cheap.
void assign_configurations(const ResultSet& set, Model& model) {
  std::map<ConfigKey, int> config_ids;
  struct CacheKey {
    Name run_id;
    Labels labels;
    Name backend;
    MeasureMode mode;
    BufferPolicy buffers;
    std::uint32_t file;
    int nodes, nranks;
    bool operator==(const CacheKey&) const = default;
  };
  std::optional<CacheKey> last_key;
  int last_config = -1;
  std::vector<int> row_config(set.rows.size(), -1);
  for (std::size_t i = 0; i < set.rows.size(); ++i) {
    const ReadRow& r = set.rows[i];
    if (r.status != RowStatus::kOk) ++model.rows_failed;
    const BufferPolicy buffers = measured_point(r).buffers;
    const CacheKey ck{r.run_id, r.labels, r.backend, r.mode, buffers, r.file, r.nodes, r.nranks};
    if (ck != last_key) {
      Config c = config_of(set, r);
      auto [it, inserted] =
          config_ids.try_emplace(key_of(c), static_cast<int>(model.configs.size()));
      if (inserted) model.configs.push_back(std::move(c));
      last_config = it->second;
      last_key = ck;
      auto& runs = model.configs[last_config].run_ids;
      if (std::find(runs.begin(), runs.end(), r.run_id) == runs.end()) runs.push_back(r.run_id);
    }
    row_config[i] = last_config;
  }

  // Configurations in natural order; remap the row assignments.
  std::vector<int> remap(model.configs.size());
  {
    int index = 0;
    for (const auto& [key, old] : config_ids) remap[old] = index++;
    std::vector<Config> sorted(model.configs.size());
    for (std::size_t i = 0; i < model.configs.size(); ++i)
      sorted[remap[i]] = std::move(model.configs[i]);
    model.configs = std::move(sorted);
  }
  for (Dim d : kAllDims) {
    for (std::size_t i = 1; i < model.configs.size(); ++i) {
      if (model.configs[i].value(d) != model.configs[0].value(d)) {
        model.varying.push_back(d);
        break;
      }
    }
  }
  for (auto& c : model.configs) c.name = describe(c, model.varying);

  for (auto& c : row_config) c = remap[c];
  model.row_config = std::move(row_config);
}

// 2. Series: configuration × test × dtype × op × placement, each with its points (rows of one
// size merged) and figures, in (test order, configuration, dtype, op, placement) order.
void group_series(const ResultSet& set, Model& model) {
  using SeriesKey = std::tuple<int, Name, DType, std::optional<ReduceOp>, Placement>;
  std::map<SeriesKey, int> series_ids;
  std::vector<std::vector<std::uint32_t>> series_rows;
  std::optional<SeriesKey> last_series_key;
  int last_series = -1;
  for (std::size_t i = 0; i < set.rows.size(); ++i) {
    const ReadRow& r = set.rows[i];
    if (r.status != RowStatus::kOk) continue;
    const SeriesKey sk{model.row_config[i], r.test, r.dtype, r.op, r.placement};
    if (sk != last_series_key) {
      auto [it, inserted] = series_ids.try_emplace(sk, static_cast<int>(series_rows.size()));
      if (inserted) series_rows.emplace_back();
      last_series = it->second;
      last_series_key = sk;
    }
    series_rows[last_series].push_back(static_cast<std::uint32_t>(i));
    ++model.rows_used;
  }

  model.series.resize(series_rows.size());
  std::vector<const ReadRow*> group;
  PointScratch scratch;
  for (const auto& [key, index] : series_ids) {
    Series& s = model.series[index];
    const auto& [config, test, dtype, op, placement] = key;
    s.config = config;
    s.test = test.str();
    s.dtype = name(dtype);
    s.op = op ? name(*op) : "";
    s.placement = name(placement);
    auto& rows = series_rows[index];
    std::stable_sort(rows.begin(), rows.end(), [&set](std::uint32_t a, std::uint32_t b) {
      return set.rows[a].bytes < set.rows[b].bytes;
    });
    for (std::size_t i = 0; i < rows.size();) {
      group.clear();
      std::size_t j = i;
      while (j < rows.size() && set.rows[rows[j]].bytes == set.rows[rows[i]].bytes) {
        group.push_back(&set.rows[rows[j]]);
        ++j;
      }
      s.points.push_back(merge_rows(group, scratch));
      s.points.back().rows.assign(rows.begin() + static_cast<std::ptrdiff_t>(i),
                                  rows.begin() + static_cast<std::ptrdiff_t>(j));
      i = j;
    }
    s.figures = compute_figures(s.points);
  }
  // Series in (test order, configuration, dtype, op, placement) order.
  std::vector<int> order(model.series.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::sort(order.begin(), order.end(), [&model](int a, int b) {
    const Series& x = model.series[a];
    const Series& y = model.series[b];
    return std::make_tuple(test_order(x.test), x.test, x.config, x.dtype, x.op, x.placement) <
           std::make_tuple(test_order(y.test), y.test, y.config, y.dtype, y.op, y.placement);
  });
  {
    std::vector<Series> sorted;
    sorted.reserve(order.size());
    for (int i : order) sorted.push_back(std::move(model.series[i]));
    model.series = std::move(sorted);
  }
}

// 3. One view per test: which dtype, op and placement the charts and tables show.
void choose_views(const ViewOptions& view, Model& model) {
  for (std::size_t i = 0; i < model.series.size();) {
    std::size_t j = i;
    std::map<std::string, std::uint64_t> dtypes, ops, placements;
    while (j < model.series.size() && model.series[j].test == model.series[i].test) {
      const auto& s = model.series[j];
      const auto n = static_cast<std::uint64_t>(s.points.size());
      dtypes[s.dtype] += n;
      ops[s.op] += n;
      placements[s.placement] += n;
      ++j;
    }
    TestView v;
    v.test = model.series[i].test;
    // File names come from the fixed table; a name outside it (only rows built in memory can
    // carry one: the readers reject them) gets the view's position instead.
    const auto known = known_test(v.test);
    v.file_key =
        known ? std::string(kKnownTests[*known]) : fmt::format("test-{}", model.views.size());
    v.dtype = choose(dtypes, view.dtype, "float");
    // Only reductions have an op; among those, sum unless asked otherwise.
    std::map<std::string, std::uint64_t> ops_for_dtype;
    for (std::size_t k = i; k < j; ++k) {
      if (model.series[k].dtype == v.dtype)
        ops_for_dtype[model.series[k].op] += model.series[k].points.size();
    }
    v.op = choose(ops_for_dtype, view.op, "sum");
    std::map<std::string, std::uint64_t> placements_for;
    for (std::size_t k = i; k < j; ++k) {
      const auto& s = model.series[k];
      if (s.dtype == v.dtype && s.op == v.op) placements_for[s.placement] += s.points.size();
    }
    v.placement = choose(placements_for, view.placement, "out-of-place");
    for (std::size_t k = i; k < j; ++k) {
      const auto& s = model.series[k];
      if (s.dtype == v.dtype && s.op == v.op && s.placement == v.placement) {
        v.series.push_back(static_cast<int>(k));
      }
    }
    model.views.push_back(std::move(v));
    i = j;
  }
}

}  // namespace

Model build_model(const ResultSet& set, const ViewOptions& view) {
  Model model;
  assign_configurations(set, model);
  group_series(set, model);
  choose_views(view, model);
  return model;
}

}  // namespace collbench::report
