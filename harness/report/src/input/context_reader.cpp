#include "input/context_reader.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "collbench/context.h"
#include "input/simdjson_value.h"

namespace collbench::report::detail {

namespace dom = simdjson::dom;

namespace {

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
    // Read from the parsed line itself: no copy as nlohmann::json in between.
    context.context = context_from(SimdjsonValue(document));
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
  // A run's rows follow each other: its context is looked up once per run, not once per row.
  std::optional<Name> last_with_context;
  for (const auto& row : set.rows) {
    if (row.run_id == last_with_context) continue;
    if (set.contexts.count(row.run_id)) {
      last_with_context = row.run_id;
      continue;
    }
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
