// Context records (one per run, the run's fingerprint): read into the typed RunContext, and the
// checks that tie them to the result rows.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <string>

#include "collbench/report/results.h"
#include "input/diagnostics.h"

namespace collbench::report::detail {

/// Adds the context record `document` (line `line` of file `file`) to set.contexts. Returns
/// kContext, or kRejected when it has no run_id, repeats a run's context, or has a member
/// that does not fit RunContext.
LineOutcome read_context(simdjson::dom::element document, std::uint32_t file, std::uint64_t line,
                         ResultSet& set);

/// The message of a context record whose run already has one (`first`).
std::string duplicate_context_message(const ResultSet& set, Name run, const ReadContext& first);

/// One kNoContext diagnostic per run whose rows have no context record in the input.
void report_rows_without_context(ResultSet& set);

}  // namespace collbench::report::detail
