// One line of a results file: parsed with simdjson's DOM, told apart (result row, context
// record, something else), and a result row decoded and checked. The decoding is generated from
// ResultRow::fields() (record_reader.h).
//
// simdjson's DOM: the whole line is validated and laid out on a tape by the library's
// runtime-selected SIMD kernel, and walking the tape is cheap. (The On-Demand API, compiled
// without SIMD flags, was several times slower per field; nlohmann's parser costs several
// seconds per million rows where simdjson needs a fraction of one.)
#pragma once

#include <simdjson.h>

#include <string>

#include "collbench/result.h"
#include "input/diagnostics.h"
#include "input/line_reader.h"
#include "input/record_reader.h"

namespace collbench::report::detail {

class RowDecoder {
 public:
  /// Parses `line`. For a result row, decodes it into `row` and says whether it can be used;
  /// for a context record, only says so (its JSON is document() until the next line).
  LineOutcome decode(const Line& line, ResultRow& row);

  dom::element document() const { return document_; }

 private:
  using Fields = RecordReader<ResultRow>;
  struct Rejected;

  /// Whether a decoded row can be used: its fields' values taken, none missing, and measured
  /// rows timed.
  LineOutcome check(const ResultRow& row, Fields::Mask seen, Rejected& rejected) const;
  /// Whether the row's time_us, when it has one, holds a headline time that can be used.
  bool headline_time_ok(const ResultRow& row) const;

  dom::parser parser_;
  dom::element document_;
  Fields fields_;
};

/// The failed-status message of a row whose status is not ok.
std::string failed_status_message(const ResultRow& row);

}  // namespace collbench::report::detail
