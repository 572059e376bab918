#include "rows.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <numeric>

#include "collbench/stats.h"
#include "collbench/warmup.h"

namespace collbench {

RowMaker::RowMaker(const Options& options, Reporter& reporter, Name run_id, Name backend,
                   int nranks, int nodes)
    : o(options),
      reporter(reporter),
      run_id(run_id),
      backend_name(backend),
      labels(request_labels(options.request)),
      nranks(nranks),
      nodes(nodes) {}

ResultRow RowMaker::common(const CollectiveSpec& spec, DType dtype, ReduceOp op) const {
  ResultRow row;
  row.run_id = run_id;
  row.test = Name(spec.name);
  row.backend = backend_name;
  row.dtype = dtype;
  if (spec.reduces) row.op = op;
  if (spec.rooted) row.root = o.root;
  row.nranks = nranks;
  row.nodes = nodes;
  row.mode = measurement_mode(o);
  row.iterations = o.iters;
  row.warmup = o.warmup;
  if (o.run_cycles != 1) row.cycle = cycle;
  if (o.agg_iters > 1) row.ops_per_iteration = o.agg_iters;
  if (o.misalign > 0) row.misalign = o.misalign;
  row.buffers = o.buffers;
  row.labels = labels;
  return row;
}

// The -a aggregate of per-rank values.
double RowMaker::aggregate(const std::vector<double>& values) const {
  switch (o.aggregate) {
    case RankAggregate::kRank0:
      return values.front();
    case RankAggregate::kMean:
      return std::accumulate(values.begin(), values.end(), 0.0) /
             static_cast<double>(values.size());
    case RankAggregate::kFastest:
      return *std::min_element(values.begin(), values.end());
    case RankAggregate::kSlowest:
      return *std::max_element(values.begin(), values.end());
  }
  return values.front();
}

// A row whose first timed iterations were still getting faster gets a note saying how many
// warm-up iterations the size needed, in the row; the console hears of it once per test
// (warmup_note).
void RowMaker::note_warmup(ResultRow& row, const std::string& what,
                           const std::vector<double>& times_us) {
  const auto trend = check_warmup(times_us);
  if (!trend) return;
  // Everything this size ran before the samples settled: the warm-up, in batch mode the
  // headline pass (which ran first, so was slower still), and the skipped leading samples.
  const bool batch_first = row.mode == MeasureMode::kBatch;
  const int needed = o.warmup + (batch_first ? o.iters : 0) + o.per_iter_skip +
                     static_cast<int>(trend->settled_at);
  const std::string text = fmt::format(
      "warm-up too short: still getting faster in the first timed iterations ({:.3g} µs, "
      "settled at {:.3g} µs after {} of them); this size needed about {} warm-up iterations "
      "(-w {})",
      trend->first_median, trend->settled_median, trend->settled_at, needed, needed);
  if (row.note.empty()) row.note = Name(text);
  ++warmup_shortfall.rows;
  if (needed > warmup_shortfall.needed) {
    warmup_shortfall.needed = needed;
    warmup_shortfall.where = what;
  }
}

void RowMaker::warmup_note(std::string_view test) {
  if (warmup_shortfall.rows == 0) return;
  reporter.note(fmt::format(
      "{}: warm-up too short in {} measurement{} (still getting faster in the first timed "
      "iterations; each row's note says by how much); the most needed about {} warm-up "
      "iterations ({}): -w {}",
      test, warmup_shortfall.rows, warmup_shortfall.rows == 1 ? "" : "s", warmup_shortfall.needed,
      warmup_shortfall.where, warmup_shortfall.needed));
  warmup_shortfall = {};
}

ResultRow RowMaker::measured(const CollectiveSpec& spec, const Layout& layout, DType dtype,
                             ReduceOp op, Placement placement, const std::string& what,
                             const std::vector<RankSample>& samples,
                             const std::vector<int>& group) {
  const std::size_t es = size_of(dtype);
  const double per_transfer =
      spec.transfers_per_iteration(spec.kind == TestKind::kPointToPoint ? o.window : 1);
  ResultRow row = common(spec, dtype, op);
  row.bytes = std::max(layout.send_count, layout.recv_count) * es;
  row.count = layout.param_count;
  row.placement = placement;
  row.graph_launches = o.graph_launches;
  if (spec.uses_window) row.window = o.window;

  std::vector<double> batch_us;
  for (int r : group) batch_us.push_back(samples[r].batch_s * 1e6 / per_transfer);
  const auto slowest = std::max_element(batch_us.begin(), batch_us.end());
  RowTimes& times = row.time_us.emplace();
  times.slowest = *slowest;
  times.fastest = *std::min_element(batch_us.begin(), batch_us.end());
  times.mean =
      std::accumulate(batch_us.begin(), batch_us.end(), 0.0) / static_cast<double>(batch_us.size());
  const int slowest_rank = group[static_cast<std::size_t>(slowest - batch_us.begin())];
  row.slowest_rank = slowest_rank;
  row.slowest_host = hosts[static_cast<std::size_t>(slowest_rank)];
  times.reported = aggregate(batch_us);
  if (o.precision) {
    const RankSample& first = samples[group.front()];
    row.iterations = first.iterations;
    RowPrecision& precision = row.precision.emplace();
    precision.target = *o.precision;
    if (first.half_width >= 0) {
      precision.half_width = first.half_width;
      precision.low_us = times.reported * (1 - first.half_width);
      precision.high_us = times.reported * (1 + first.half_width);
    }
    precision.converged = first.converged;
    precision.seconds = first.precision_s;
  }
  std::vector<double> cpu_us;
  for (int r : group) cpu_us.push_back(samples[r].cpu_s * 1e6 / per_transfer);
  row.cpu_time_us = aggregate(cpu_us);
  // Per iteration, the group's slowest rank: the operation is done when the last rank is.
  const std::size_t n = samples[group.front()].iteration_s.size();
  std::vector<std::vector<double>> per_rank;
  std::vector<double> per_iteration(n, 0.0);
  for (int r : group) {
    std::vector<double>& mine = per_rank.emplace_back();
    for (std::size_t i = 0; i < n && i < samples[r].iteration_s.size(); ++i) {
      mine.push_back(samples[r].iteration_s[i] * 1e6 / per_transfer);
      per_iteration[i] = std::max(per_iteration[i], mine.back());
    }
  }
  times.per_iteration = summarize(per_iteration);
  if (o.per_iter_skip > 0) times.skipped_iterations = o.per_iter_skip;
  note_warmup(row, what, per_iteration);
  row.timestamp =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  reporter.iterations(row, per_rank);

  const double seconds = times.reported * 1e-6;
  const double bytes = static_cast<double>(spec.alg_bytes(layout, es, nranks));
  const double algbw = seconds > 0 ? bytes / seconds / 1e9 : 0;
  row.algbw_gbps = algbw;
  row.busbw_gbps = algbw * spec.bus_factor(nranks);

  if (o.check > 0) {
    std::int64_t wrong = 0;
    for (int r : group) wrong += samples[r].wrong;
    row.wrong = wrong;
    if (wrong > 0) {
      row.status = RowStatus::kWrong;
      for (int r : group) {
        const RankSample& f = samples[r];
        if (f.wrong == 0) continue;
        const std::string text = fmt::format(
            "first mismatch in {}: rank {} ({}) element {}: expected {:g}, got {:g} ({} wrong "
            "on that rank)",
            what, r, hosts[static_cast<std::size_t>(r)], f.first_index, f.first_expected,
            f.first_got, f.wrong);
        reporter.note(text);
        if (first_mismatch_.empty()) first_mismatch_ = text;
        break;
      }
    }
  }
  return row;
}

}  // namespace collbench
