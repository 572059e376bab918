#include "context_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <utility>
#include <vector>

#include "collbench/context.h"

namespace collbench::report::detail {

namespace dom = simdjson::dom;

namespace {

// The parsed line as nlohmann::json (what context_from_json reads): converting the parsed tape
// is cheaper than parsing the line a second time.
nlohmann::json to_nlohmann(dom::element e) {
  switch (e.type()) {
    case dom::element_type::OBJECT: {
      nlohmann::json j = nlohmann::json::object();
      auto& members = j.get_ref<nlohmann::json::object_t&>();
      for (const dom::key_value_pair member : dom::object(e)) {
        members.insert_or_assign(std::string(member.key), to_nlohmann(member.value));
      }
      return j;
    }
    case dom::element_type::ARRAY: {
      const dom::array items(e);
      nlohmann::json j = nlohmann::json::array();
      auto& array = j.get_ref<nlohmann::json::array_t&>();
      array.reserve(items.size());
      for (const dom::element item : items) array.push_back(to_nlohmann(item));
      return j;
    }
    case dom::element_type::STRING:
      return std::string(e.get_string().value_unsafe());
    case dom::element_type::INT64: {
      // nlohmann's own parser keeps non-negative integers unsigned; record.h relies on it.
      const std::int64_t v = e.get_int64().value_unsafe();
      return v >= 0 ? nlohmann::json(static_cast<std::uint64_t>(v)) : nlohmann::json(v);
    }
    case dom::element_type::UINT64:
      return e.get_uint64().value_unsafe();
    case dom::element_type::DOUBLE:
      return e.get_double().value_unsafe();
    case dom::element_type::BOOL:
      return e.get_bool().value_unsafe();
    case dom::element_type::NULL_VALUE:
      return nullptr;
  }
  return nullptr;
}

std::vector<std::pair<std::string, int>> device_counts(const std::vector<RankRecord>& ranks) {
  std::vector<std::pair<std::string, int>> devices;
  for (const auto& rank : ranks) {
    std::string name = rank.device.model;
    if (!rank.device.driver_version.empty()) {
      name += fmt::format(" (driver {})", rank.device.driver_version);
    }
    const auto it = std::find_if(devices.begin(), devices.end(),
                                 [&name](const auto& device) { return device.first == name; });
    if (it == devices.end()) {
      devices.emplace_back(std::move(name), 1);
    } else {
      ++it->second;
    }
  }
  return devices;
}

LineOutcome rejected(Diagnostic::Kind kind, std::string message) {
  return {LineOutcome::kRejected, kind, std::move(message)};
}

}  // namespace

LineOutcome read_context(dom::element document, std::uint32_t file, std::uint64_t line,
                         ResultSet& set) {
  std::string_view run_text;
  if (document["run_id"].get_string().get(run_text)) {
    return rejected(Diagnostic::Kind::kBadRecord, "context record without a run_id; skipped");
  }
  const Name run(run_text);
  if (const auto existing = set.contexts.find(run); existing != set.contexts.end()) {
    return rejected(Diagnostic::Kind::kDuplicate,
                    duplicate_context_message(set, run, existing->second));
  }
  ReadContext context;
  try {
    context.context = context_from_json(to_nlohmann(document));
  } catch (const RecordError& e) {
    return rejected(Diagnostic::Kind::kBadRecord,
                    fmt::format("context record: {}; skipped", e.what()));
  }
  context.devices = device_counts(context.context.ranks);
  // Summarised in `devices`: at 256 ranks the list is most of the record, and kept it cost
  // more memory than a million result rows.
  std::vector<RankRecord>().swap(context.context.ranks);
  context.file = file;
  context.line = static_cast<std::uint32_t>(line);
  set.contexts.emplace(run, std::move(context));
  return {LineOutcome::kContext, {}, {}};
}

std::string duplicate_context_message(const ResultSet& set, Name run, const ReadContext& first) {
  return fmt::format("context of run {} already read at {}:{}; skipped", run, set.files[first.file],
                     first.line);
}

void report_rows_without_context(ResultSet& set) {
  struct Missing {
    const ReadRow* first;
    std::uint64_t rows;
  };
  std::vector<Missing> missing;  // in the order of their first row
  std::unordered_map<Name, std::size_t> index;
  for (const auto& row : set.rows) {
    if (set.contexts.count(row.run_id)) continue;
    const auto [it, inserted] = index.try_emplace(row.run_id, missing.size());
    if (inserted) missing.push_back({&row, 0});
    ++missing[it->second].rows;
  }
  for (const auto& [first, rows] : missing) {
    add_diagnostic(set, {Diagnostic::Kind::kNoContext, set.files[first->file], first->line,
                         fmt::format("{} result row(s) of run {} have no context line in the "
                                     "input: their fingerprint (hosts, versions) is unknown; "
                                     "rows used",
                                     rows, first->run_id)});
  }
}

}  // namespace collbench::report::detail
