// collbench-sweep's command line (CLI11), parsed once into a SweepCommand.
#pragma once

#include <string>

#include "collbench/sweep/campaign.h"
#include "collbench/sweep/commands.h"

namespace collbench::sweep {

/// Outcome of parsing: the command, or the text for --help / --version (print it, exit 0).
struct ParsedCommandLine {
  SweepCommand command;
  std::string exit_text;
};

/// Parses argv. `rules` (collbench's tests, backends and option checker, which the caller
/// knows) go into the command's settings to check the campaign file with. The command also gets
/// this program's directory (for the collbench beside it) and whether stdout is a terminal.
/// Throws Error(kUsage) with one line naming the bad argument and pointing at --help.
ParsedCommandLine parse_command_line(int argc, const char* const* argv, CampaignRules rules);

}  // namespace collbench::sweep
