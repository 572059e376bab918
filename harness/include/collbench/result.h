// Result records: one row per (test, size, dtype, op, placement[, pair]), and their JSON form
// (results/schema/collbench-results.schema.json).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "collbench/stats.h"
#include "collbench/types.h"

namespace collbench {

/// Name and version of the results schema. The version changes whenever a field does.
inline constexpr const char* kSchemaName = "collbench-results";
inline constexpr int kSchemaVersion = 1;

enum class RowStatus {
  kOk,           ///< measured (and verified when checking was on)
  kWrong,        ///< measured, verification found wrong elements
  kUnsupported,  ///< the backend cannot run this dtype/op; not measured
};
std::string_view name(RowStatus status);

/// Times of one measurement in microseconds per operation.
struct RowTimes {
  double reported = 0;  ///< the aggregate chosen by -a (default: slowest rank); bandwidths use it
  double slowest = 0;   ///< slowest rank's batch time: a collective is done when the last rank is
  double mean = 0;      ///< mean over ranks (nccl-tests' default aggregate)
  double fastest = 0;
  /// Per-iteration times: for every iteration the slowest participating rank's time.
  Summary per_iteration;
};

struct ResultRow {
  std::string run_id;
  std::string test;
  std::string backend;
  DType dtype = DType::kFloat;
  std::optional<ReduceOp> op;  ///< reductions only
  int root = -1;               ///< rooted collectives only
  std::uint64_t bytes = 0;     ///< nccl-tests "size": max(send, recv) buffer bytes
  std::uint64_t count = 0;     ///< nccl-tests "count": elements handed to the library
  int nranks = 0;
  int nodes = 0;
  Placement placement = Placement::kOutOfPlace;
  std::string mode;            ///< "batch", "blocking" or "graph"
  int iterations = 0;
  int warmup = 0;
  int graph_launches = 0;
  int window = 0;              ///< point-to-point bw/bibw messages in flight; 0 otherwise
  RowTimes time_us;
  double algbw_gbps = 0;       ///< GB/s, GB = 1e9 bytes
  double busbw_gbps = 0;
  int slowest_rank = -1;
  std::string slowest_host;
  std::optional<std::int64_t> wrong;  ///< summed over ranks; nullopt when not checked
  RowStatus status = RowStatus::kOk;
  std::string note;            ///< why a row is unsupported
  /// Point-to-point: the two ranks of the pair this row measured.
  std::optional<std::pair<int, int>> pair;
};

nlohmann::json to_json(const ResultRow& row);
/// The "schema" member every line carries.
nlohmann::json schema_tag();

}  // namespace collbench
