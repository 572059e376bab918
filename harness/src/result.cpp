#include "collbench/result.h"

namespace collbench {

std::string_view name(RowStatus status) {
  switch (status) {
    case RowStatus::kOk: return "ok";
    case RowStatus::kWrong: return "wrong";
    case RowStatus::kUnsupported: return "unsupported";
  }
  return "ok";
}

nlohmann::json schema_tag() { return {{"name", kSchemaName}, {"version", kSchemaVersion}}; }

namespace {

nlohmann::json summary_json(const Summary& s) {
  return {{"n", s.n},       {"min", s.min},   {"p50", s.p50}, {"p99", s.p99},
          {"max", s.max},   {"mean", s.mean}, {"cv", s.cv}};
}

}  // namespace

nlohmann::json to_json(const ResultRow& row) {
  nlohmann::json j;
  j["schema"] = schema_tag();
  j["record"] = "result";
  j["run_id"] = row.run_id;
  j["test"] = row.test;
  j["backend"] = row.backend;
  j["dtype"] = name(row.dtype);
  j["op"] = row.op ? nlohmann::json(name(*row.op)) : nlohmann::json(nullptr);
  j["root"] = row.root >= 0 ? nlohmann::json(row.root) : nlohmann::json(nullptr);
  j["bytes"] = row.bytes;
  j["count"] = row.count;
  j["nranks"] = row.nranks;
  j["nodes"] = row.nodes;
  j["placement"] = name(row.placement);
  j["mode"] = row.mode;
  j["iterations"] = row.iterations;
  j["warmup"] = row.warmup;
  j["graph_launches"] = row.graph_launches;
  j["window"] = row.window > 0 ? nlohmann::json(row.window) : nlohmann::json(nullptr);
  j["pair"] = row.pair ? nlohmann::json::array({row.pair->first, row.pair->second})
                       : nlohmann::json(nullptr);
  if (row.status == RowStatus::kUnsupported) {
    j["time_us"] = nullptr;
    j["algbw_gbps"] = nullptr;
    j["busbw_gbps"] = nullptr;
    j["slowest_rank"] = nullptr;
    j["slowest_host"] = nullptr;
  } else {
    j["time_us"] = {{"reported", row.time_us.reported},
                    {"slowest", row.time_us.slowest},
                    {"mean", row.time_us.mean},
                    {"fastest", row.time_us.fastest},
                    {"per_iteration", summary_json(row.time_us.per_iteration)}};
    j["algbw_gbps"] = row.algbw_gbps;
    j["busbw_gbps"] = row.busbw_gbps;
    j["slowest_rank"] = row.slowest_rank;
    j["slowest_host"] = row.slowest_host;
  }
  j["wrong"] = row.wrong ? nlohmann::json(*row.wrong) : nlohmann::json(nullptr);
  j["status"] = name(row.status);
  if (!row.note.empty()) j["note"] = row.note;
  return j;
}

}  // namespace collbench
