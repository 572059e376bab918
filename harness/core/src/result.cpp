#include "collbench/result.h"

#include <array>

namespace collbench {
namespace {

constexpr std::array<std::string_view, 3> kStatusNames{"ok", "wrong", "unsupported"};
constexpr std::array<std::string_view, 3> kModeNames{"batch", "blocking", "graph"};

}  // namespace

std::span<const std::string_view> enum_names(RowStatus) { return kStatusNames; }
std::string_view name(RowStatus status) { return enum_name(status); }
std::span<const std::string_view> enum_names(MeasureMode) { return kModeNames; }
std::string_view name(MeasureMode mode) { return enum_name(mode); }

nlohmann::json schema_tag() { return {{"name", kSchemaName}, {"version", kSchemaVersion}}; }

nlohmann::json to_json(const ResultRow& row) { return results_line(row, "result", schema_tag()); }

std::optional<ResultRow> result_row_from_line(std::string_view line) {
  const auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object() || record_kind(j) != "result") return std::nullopt;
  try {
    ResultRow row;
    read_record(j, row, "");
    return row;
  } catch (const RecordError&) {
    return std::nullopt;
  }
}

}  // namespace collbench
