// The result row: one measurement (test, size, dtype, op, placement[, pair]). collbench writes
// it, collbench-report reads it, and both use this one struct and its one field list
// (ResultRow::fields). results/schema/collbench-results.schema.json describes the same fields;
// tests/unit/result_schema_test.cpp holds the schema to this list.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string_view>
#include <tuple>

#include "collbench/name.h"
#include "collbench/nullable.h"
#include "collbench/record.h"
#include "collbench/stats.h"
#include "collbench/types.h"

namespace collbench {

/// Name and version of the results schema. The version changes whenever a field does. Version 2
/// added the optional cycle, ops_per_iteration, misalign, cpu_time_us, timestamp and
/// time_us.skipped_iterations; version 3 the result's buffers and the options' buffers
/// (absent in older versions, whose runs all rotated), and the result's precision and the
/// options' precision and max_time_s (--precision), and the result's group (--split); readers
/// take every version up to this one.
inline constexpr const char* kSchemaName = "collbench-results";
inline constexpr int kSchemaVersion = 3;

enum class RowStatus : std::uint8_t {
  kOk,           ///< measured (and verified when checking was on)
  kWrong,        ///< measured, verification found wrong elements
  kUnsupported,  ///< the backend cannot run this dtype/op; not measured
};
std::span<const std::string_view> enum_names(RowStatus);
std::string_view name(RowStatus status);

/// How operations were timed.
enum class MeasureMode : std::uint8_t {
  kBatch,     ///< back-to-back iterations timed as one batch (nccl-tests)
  kBlocking,  ///< each operation completed and timed separately (-z 1)
  kGraph,     ///< the iterations captured once and replayed as a CUDA graph (-G)
};
std::span<const std::string_view> enum_names(MeasureMode);
std::string_view name(MeasureMode mode);

/// Times of one measurement in microseconds per operation (null: NaN `reported`).
struct RowTimes {
  double reported = 0;  ///< the aggregate chosen by -a (default: slowest rank); bandwidths use it
  double slowest = 0;   ///< slowest rank's batch time: a collective is done when the last rank is
  double mean = 0;      ///< mean over ranks (nccl-tests' default aggregate)
  double fastest = 0;
  /// Per-iteration times: for every iteration the slowest participating rank's time.
  Summary per_iteration;
  /// Leading iterations left out of per_iteration (-K); null when none were.
  Nullable<int> skipped_iterations;

  static constexpr auto fields() {
    return std::tuple{
        Field{"reported", &RowTimes::reported},
        Field{"slowest", &RowTimes::slowest},
        Field{"mean", &RowTimes::mean},
        Field{"fastest", &RowTimes::fastest},
        Field{"per_iteration", &RowTimes::per_iteration},
        Field{"skipped_iterations", &RowTimes::skipped_iterations, Presence::kOmittedWhenEmpty}};
  }
};

template <>
struct NullBits<RowTimes> {
  static constexpr RowTimes null() { return {NullBits<double>::null(), 0, 0, 0, {}, {}}; }
  static bool is_null(const RowTimes& t) { return NullBits<double>::is_null(t.reported); }
};

/// --precision: the 95% confidence interval of the reported time that the adaptive batches
/// reached (batch means over the timed batches, so honest for autocorrelated times).
struct RowPrecision {
  double target = 0;  ///< the half-width asked for, relative to the time (0.01: 1%)
  /// The half-width reached, relative (the worst rank's); null: too few batches for an interval.
  Nullable<double> half_width;
  Nullable<double> low_us;   ///< time_us.reported minus the half-width
  Nullable<double> high_us;  ///< time_us.reported plus the half-width
  bool converged = false;    ///< false: --max-time ran out first
  double seconds = 0;        ///< time the timed batches took

  static constexpr auto fields() {
    return std::tuple{Field{"target", &RowPrecision::target},
                      Field{"half_width", &RowPrecision::half_width},
                      Field{"low_us", &RowPrecision::low_us},
                      Field{"high_us", &RowPrecision::high_us},
                      Field{"converged", &RowPrecision::converged},
                      Field{"seconds", &RowPrecision::seconds}};
  }
};

/// --split: the group a row was measured in, while the other groups of its round ran the same
/// test at the same time. Bandwidths are the group's own (its ranks, its bus factor).
struct RowGroup {
  SplitMode mode = SplitMode::kNode;
  int index = 0;            ///< the group within its round (its color)
  int round = 0;            ///< the tournament round (pairs, sample); 0 for the other modes
  std::vector<Name> hosts;  ///< the hosts of the group's ranks, in rank order, each once
  std::vector<int> ranks;   ///< the group's ranks, as numbered in the whole job

  static constexpr auto fields() {
    return std::tuple{Field{"mode", &RowGroup::mode}, Field{"index", &RowGroup::index},
                      Field{"round", &RowGroup::round}, Field{"hosts", &RowGroup::hosts},
                      Field{"ranks", &RowGroup::ranks}};
  }
};

/// The algorithm and protocol the library ran a row's calls with (NCCL: from its profiler
/// events or its TUNING log), so that a curve shows where a size switches algorithm: tree and
/// NVLS inflate busbw on two nodes, which is the usual "my busbw is above the link" answer.
/// Names, like the row's other texts: a report holds a million rows and few distinct values.
struct RowAlgorithm {
  Name algorithm;  ///< "RING", "TREE", "NVLS", "PAT", ...; a symmetric kernel's name
  Name protocol;   ///< "LL", "LL128", "SIMPLE"; "" where the path has none
  Name path;       ///< "normal", "symmetric" (registered windows), "copy_engine"
  Nullable<int> channels;
  /// Calls of the row chose differently (a tuner plugin, NCCL_ALGO lists); `algorithm` and
  /// `protocol` are then the choice most calls made and `detail` lists them all.
  bool mixed = false;
  Name detail;  ///< e.g. "RING/LL128, 16 channels"
  Name source;  ///< "tuning_log" or "profiler"

  static constexpr auto fields() {
    using A = RowAlgorithm;
    return std::tuple{Field{"algorithm", &A::algorithm}, Field{"protocol", &A::protocol},
                      Field{"path", &A::path},           Field{"channels", &A::channels},
                      Field{"mixed", &A::mixed},         Field{"detail", &A::detail},
                      Field{"source", &A::source}};
  }
  friend bool operator==(const RowAlgorithm&, const RowAlgorithm&) = default;
};

/// Members are ordered to pack the struct (a report holds a million); JSON follows fields().
struct ResultRow {
  Name run_id;
  Name test;
  Name backend;
  Name note;                ///< why a row is unsupported, or that its warm-up was too short
  Labels labels;            ///< added by collbench-sweep's collect (campaign, variant, nodes, ...)
  std::uint64_t bytes = 0;  ///< nccl-tests "size": max(send, recv) buffer bytes
  std::uint64_t count = 0;  ///< nccl-tests "count": elements handed to the library
  /// The measured values: null for rows that were not measured (status unsupported).
  Nullable<RowTimes> time_us;
  Nullable<double> algbw_gbps;  ///< GB/s, GB = 1e9 bytes
  Nullable<double> busbw_gbps;
  /// Host time to issue one operation, before it completes (nccl-tests' -C "cputime"), in µs.
  Nullable<double> cpu_time_us;
  /// When the measurement ended, Unix time in seconds (nccl-tests -S prints it).
  Nullable<double> timestamp;
  Nullable<std::int64_t> wrong;  ///< summed over ranks; null when not checked
  std::optional<Name> slowest_host;
  Nullable<int> slowest_rank;
  Nullable<int> root;    ///< rooted collectives only
  Nullable<int> window;  ///< point-to-point bw/bibw messages in flight
  Nullable<Pair> pair;   ///< point-to-point: the two ranks of the pair this row measured
  Nullable<int> cycle;   ///< -N: the repetition of the whole sweep, from 0 (null: one sweep)
  Nullable<int> ops_per_iteration;  ///< -m: operations aggregated per iteration (null: one)
  Nullable<int> misalign;           ///< -u: elements the buffers were offset by (null: none)
  int nranks = 0;
  int nodes = 0;
  int iterations = 0;
  int warmup = 0;
  int graph_launches = 0;
  DType dtype = DType::kFloat;
  std::optional<ReduceOp> op;  ///< reductions only
  /// --buffers: rotating or fixed buffers (absent: a file older than the option, which rotated,
  /// or an imported row whose tool did not say).
  std::optional<BufferPolicy> buffers;
  Placement placement = Placement::kOutOfPlace;
  MeasureMode mode = MeasureMode::kBatch;
  RowStatus status = RowStatus::kOk;
  // The three members below are Boxed (collbench/boxed.h): most rows have none of them, and
  // the report holds every row of a campaign at once.
  /// --precision: the interval reached; `iterations` then counts every timed iteration.
  Boxed<RowPrecision> precision;
  /// --split: the group this row measured (absent: the whole job).
  Boxed<RowGroup> group;
  /// What the library ran (absent: it did not say, or the backend cannot tell).
  Boxed<RowAlgorithm> algorithm;

  /// The headline values, 0 for rows that were not measured.
  double busbw() const { return busbw_gbps.value_or(0); }
  double algbw() const { return algbw_gbps.value_or(0); }
  double time() const { return time_us ? time_us->reported : 0; }

  /// The fields in the schema's order: every one is written (null when empty) except those
  /// marked kOmittedWhenEmpty, which appear only when set.
  static constexpr auto fields() {
    return std::tuple{
        Field{"run_id", &ResultRow::run_id},
        Field{"test", &ResultRow::test},
        Field{"backend", &ResultRow::backend},
        Field{"dtype", &ResultRow::dtype},
        Field{"op", &ResultRow::op},
        Field{"root", &ResultRow::root},
        Field{"bytes", &ResultRow::bytes},
        Field{"count", &ResultRow::count},
        Field{"nranks", &ResultRow::nranks},
        Field{"nodes", &ResultRow::nodes},
        Field{"placement", &ResultRow::placement},
        Field{"mode", &ResultRow::mode},
        Field{"iterations", &ResultRow::iterations},
        Field{"warmup", &ResultRow::warmup},
        Field{"graph_launches", &ResultRow::graph_launches},
        Field{"window", &ResultRow::window},
        Field{"pair", &ResultRow::pair},
        Field{"time_us", &ResultRow::time_us},
        Field{"algbw_gbps", &ResultRow::algbw_gbps},
        Field{"busbw_gbps", &ResultRow::busbw_gbps},
        Field{"slowest_rank", &ResultRow::slowest_rank},
        Field{"slowest_host", &ResultRow::slowest_host},
        Field{"wrong", &ResultRow::wrong},
        Field{"status", &ResultRow::status},
        Field{"note", &ResultRow::note, Presence::kOmittedWhenEmpty},
        Field{"labels", &ResultRow::labels, Presence::kOmittedWhenEmpty},
        Field{"cycle", &ResultRow::cycle, Presence::kOmittedWhenEmpty},
        Field{"ops_per_iteration", &ResultRow::ops_per_iteration, Presence::kOmittedWhenEmpty},
        Field{"misalign", &ResultRow::misalign, Presence::kOmittedWhenEmpty},
        Field{"buffers", &ResultRow::buffers, Presence::kOmittedWhenEmpty},
        Field{"cpu_time_us", &ResultRow::cpu_time_us, Presence::kOmittedWhenEmpty},
        Field{"timestamp", &ResultRow::timestamp, Presence::kOmittedWhenEmpty},
        Field{"precision", &ResultRow::precision, Presence::kOmittedWhenEmpty},
        Field{"group", &ResultRow::group, Presence::kOmittedWhenEmpty},
        Field{"algorithm", &ResultRow::algorithm, Presence::kOmittedWhenEmpty},
    };
  }
};

/// What a row measured, apart from which ranks took it, when and in which run: the test and every
/// setting that makes it another measurement. Rows of one run with equal points are the same
/// measurement taken again (by another --split group or round, or in another -N cycle): the
/// report's duplicate check and its slow-pair analysis compare these, and its configurations take
/// their buffers and mode from it. A setting a row does not state is the one it ran with (-1 for
/// "none"; --buffers, absent from files older than the option, rotated).
struct MeasuredPoint {
  Name test;
  std::uint64_t bytes = 0;
  DType dtype = DType::kFloat;
  int op = -1;  ///< the ReduceOp, -1 for a test without one
  Placement placement = Placement::kOutOfPlace;
  int root = -1;
  int window = -1;
  int ops_per_iteration = -1;
  int misalign = -1;
  BufferPolicy buffers = BufferPolicy::kRotate;
  MeasureMode mode = MeasureMode::kBatch;

  auto tied() const {
    return std::tie(test, bytes, dtype, op, placement, root, window, ops_per_iteration, misalign,
                    buffers, mode);
  }
  bool operator==(const MeasuredPoint& o) const { return tied() == o.tied(); }
  bool operator<(const MeasuredPoint& o) const { return tied() < o.tied(); }
};

inline MeasuredPoint measured_point(const ResultRow& row) {
  return {row.test,
          row.bytes,
          row.dtype,
          row.op ? static_cast<int>(*row.op) : -1,
          row.placement,
          row.root.value_or(-1),
          row.window.value_or(-1),
          row.ops_per_iteration.value_or(-1),
          row.misalign.value_or(-1),
          row.buffers.value_or(BufferPolicy::kRotate),
          row.mode};
}

/// The "schema" member every line carries.
nlohmann::json schema_tag();

/// The result line: the row's fields plus "schema" and "record": "result".
nlohmann::json to_json(const ResultRow& row);

/// The result row a results-file line holds, read by ResultRow::fields() like every record (no
/// member by its raw key); nullopt for any other line: not JSON, not a "result" record, or a
/// row that does not read.
std::optional<ResultRow> result_row_from_line(std::string_view line);

}  // namespace collbench

template <>
struct fmt::formatter<collbench::RowStatus> : fmt::formatter<std::string_view> {
  auto format(collbench::RowStatus v, format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(collbench::name(v), ctx);
  }
};
template <>
struct fmt::formatter<collbench::MeasureMode> : fmt::formatter<std::string_view> {
  auto format(collbench::MeasureMode v, format_context& ctx) const {
    return fmt::formatter<std::string_view>::format(collbench::name(v), ctx);
  }
};
