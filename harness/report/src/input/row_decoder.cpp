#include "input/row_decoder.h"

#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <utility>

#include "collbench/sizes.h"
#include "input/row_check.h"

namespace collbench::report::detail {

namespace {

static_assert(kLinePadding >= simdjson::SIMDJSON_PADDING);

// The members every collbench line carries besides its record's fields.
struct Envelope {
  bool has_schema = false;
  std::string_view schema_name;
  std::int64_t schema_version = -1;
  std::string_view record;

  void read(std::string_view key, dom::element value) {
    if (key == "schema") {
      read_schema(value);
    } else if (key == "record" && value.type() == dom::element_type::STRING) {
      record = value.get_string().value_unsafe();
    }
  }

  void read_schema(dom::element value) {
    has_schema = true;
    dom::object object;
    if (value.get_object().get(object)) return;
    for (const dom::key_value_pair member : object) {
      if (member.key == "name") {
        if (member.value.get_string().get(schema_name)) schema_name = "?";
      } else if (member.key == "version") {
        double version = -1;
        if (member.value.get_double().get(version)) version = -1;
        const bool integral = version == std::floor(version) && std::abs(version) < 1e18;
        schema_version = integral ? static_cast<std::int64_t>(version) : -1;
      }
    }
  }

  // Why the line is not a result row of a version this reader knows, if it is not.
  std::optional<LineOutcome> check() const {
    if (!has_schema || schema_name != kSchemaName) {
      return LineOutcome{
          LineOutcome::kForeign, Diagnostic::Kind::kNotCollbench,
          has_schema ? fmt::format("schema name is \"{}\", not \"{}\"", schema_name, kSchemaName)
                     : std::string("no \"schema\" member: not a collbench record")};
    }
    if (schema_version > kSchemaVersion) {
      return LineOutcome{
          LineOutcome::kRejected, Diagnostic::Kind::kNewerSchema,
          fmt::format("written with results schema version {} by a newer collbench; this "
                      "collbench-report reads version {}: use a collbench-report at least as "
                      "new as the collbench that wrote it; skipped",
                      schema_version, kSchemaVersion)};
    }
    if (schema_version < 1) {
      return LineOutcome{LineOutcome::kRejected, Diagnostic::Kind::kBadRecord,
                         "schema.version is not a positive integer; skipped"};
    }
    if (record == "context") return LineOutcome{LineOutcome::kContext, {}, {}};
    if (record != "result") {
      return LineOutcome{LineOutcome::kRejected, Diagnostic::Kind::kBadRecord,
                         record.empty()
                             ? std::string("no \"record\" member; skipped")
                             : fmt::format("unknown record kind \"{}\"; skipped", record)};
    }
    return std::nullopt;
  }
};

void append_name(std::string& list, std::string_view name) {
  if (!list.empty()) list += ", ";
  list += name;
}

template <typename Reader>
void append_names(std::string& list, typename Reader::Mask fields) {
  for (std::size_t i = 0; i < Reader::kCount; ++i) {
    if ((fields >> i) & 1) append_name(list, Reader::kNames[i]);
  }
}

LineOutcome bad_record(std::string message) {
  return {LineOutcome::kRejected, Diagnostic::Kind::kBadRecord, std::move(message)};
}

}  // namespace

// The fields of a line whose values were not taken.
struct RowDecoder::Rejected {
  std::string wrong;        ///< of the wrong type or value, in line order
  Fields::Mask failed = 0;  ///< every one
  Fields::Mask nested = 0;  ///< records holding such a member: named after the others

  void add(std::size_t index, ReadError error) {
    failed |= Fields::Mask{1} << index;
    if (error == ReadError::kNested) {
      nested |= Fields::Mask{1} << index;
    } else {
      append_name(wrong, Fields::kNames[index]);
    }
  }
};

LineOutcome RowDecoder::decode(const Line& line, ResultRow& row) {
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(line.text.data());
  if (const auto error = parser_.parse(bytes, line.text.size(), false).get(document_)) {
    return {LineOutcome::kSyntax, Diagnostic::Kind::kInvalidJson, simdjson::error_message(error)};
  }
  dom::object object;
  if (document_.get_object().get(object)) {
    return {LineOutcome::kForeign, Diagnostic::Kind::kNotCollbench,
            "not a JSON object, so not a collbench record"};
  }
  Envelope envelope;
  Rejected rejected;
  const Fields::Mask seen = fields_.read(
      object, row,
      [&envelope](std::string_view key, dom::element value) { envelope.read(key, value); },
      [&rejected](std::size_t index, ReadError error) { rejected.add(index, error); });
  if (auto outcome = envelope.check()) return std::move(*outcome);
  return check(row, seen, rejected);
}

LineOutcome RowDecoder::check(const ResultRow& row, Fields::Mask seen, Rejected& rejected) const {
  constexpr auto kTime = Fields::index_of<&ResultRow::time_us>();
  if (!((rejected.failed >> kTime) & 1) && !headline_time_ok(row)) {
    rejected.nested |= Fields::Mask{1} << kTime;
  }
  if (!rejected.wrong.empty() || rejected.nested != 0) {
    append_names<Fields>(rejected.wrong, rejected.nested);
    return bad_record(fmt::format("result row with a field of the wrong type or value: {}; skipped",
                                  rejected.wrong));
  }
  if ((seen & Fields::kRequired) != Fields::kRequired) {
    std::string missing;
    append_names<Fields>(missing, Fields::kRequired & ~seen);
    return bad_record(fmt::format("result row without required field(s) {}; skipped", missing));
  }
  if (row.status != RowStatus::kUnsupported && !row.time_us) {
    return bad_record("measured row (status ok/wrong) with time_us null; skipped");
  }
  if (const std::string problem = row_value_problem(row, RowOrigin::kCollbench); !problem.empty()) {
    return bad_record(fmt::format("result row with a value out of range: {}; skipped", problem));
  }
  return {};
}

// A time_us object may lack the members an older collbench did not write, but not the headline
// time, which cannot be negative.
bool RowDecoder::headline_time_ok(const ResultRow& row) const {
  if (!row.time_us) return true;
  constexpr auto kTime = Fields::index_of<&ResultRow::time_us>();
  constexpr auto kReported = RecordReader<RowTimes>::index_of<&RowTimes::reported>();
  const auto seen = fields_.reader<kTime>().value_reader().seen();
  return ((seen >> kReported) & 1) != 0 && row.time_us->reported >= 0;
}

std::string failed_status_message(const ResultRow& row) {
  const std::string what = fmt::format("{} {} {}{}", row.test, format_bytes(row.bytes), row.dtype,
                                       row.op ? fmt::format(" {}", *row.op) : "");
  if (row.status == RowStatus::kWrong) {
    // Imported rows may say only that the check failed (OSU's "Fail"), not how many were wrong.
    return fmt::format(
        "status \"wrong\" ({}) for {}: listed in results.csv, left out of charts and tables",
        row.wrong ? fmt::format("{} wrong elements", *row.wrong)
                  : std::string("wrong elements not counted"),
        what);
  }
  return fmt::format("status \"unsupported\" for {}{}: not measured, listed in results.csv", what,
                     row.note.empty() ? "" : fmt::format(" ({})", row.note));
}

}  // namespace collbench::report::detail
