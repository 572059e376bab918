// The formats the reader knows besides collbench's own, and the reader of each.
#pragma once

#include <memory>

#include "collbench/report/results.h"
#include "input/diagnostics.h"
#include "input/import_sink.h"

namespace collbench::report::detail {

/// The reader of a file of `input.format` (another tool's output, not kCollbench), putting
/// what it reads into `set` and its problems into `file`; `imports` says what the user gave.
std::unique_ptr<Importer> make_importer(const InputFile& input, ResultSet& set,
                                        FileDiagnostics& file, const ImportOptions& imports);

}  // namespace collbench::report::detail
