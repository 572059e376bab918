// Agreement on the command line: a launcher or a wrapper script can give ranks different
// options, and ranks that measure different things hang or report wrong data. Every rank's
// parsed options are compared at start-up, before anything else crosses the bootstrap.
#pragma once

#include <string>

#include "collbench/bootstrap.h"
#include "collbench/cli.h"

namespace collbench {

/// Compares what every rank made of its command line: `parsed` (its options or --help text)
/// or `usage_error` (the line its parse was refused with; empty when it was accepted).
/// Returns when every rank parsed the same options (or every rank was given --help). Throws
/// Error(kUsage) on every rank otherwise, with the same line everywhere: the refused command
/// line's error, or the first rank whose options differ from rank 0's and the option.
void agree_on_command_line(Bootstrap& bootstrap, const ParseResult& parsed,
                           const std::string& usage_error);

}  // namespace collbench
