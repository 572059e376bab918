// What every collbench-sweep subcommand works on: the campaign, its runs, its results and
// manifest, and the programs it runs; and the helpers they share (not part of the library's
// public API).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "collbench/sweep/campaign.h"
#include "collbench/sweep/commands.h"
#include "collbench/sweep/launch.h"
#include "collbench/sweep/manifest.h"
#include "collbench/sweep/matrix.h"

namespace collbench::sweep {

struct Session {
  Campaign campaign;
  std::vector<RunSpec> runs;
  CampaignPaths paths;
  Manifest manifest{std::filesystem::path()};
  Tools tools;
};

/// Loads the campaign of `s` and works out its runs (local ones with s.local), paths and tools.
Session open_session(const SweepSettings& s);

/// Prints one line to the command's output, at once.
void print(const SweepSettings& s, const std::string& line);

/// The manifest's lock, saying so when another collbench-sweep makes us wait for it.
ManifestLock lock_manifest(const Session& session, const SweepSettings& s);

/// Throws Error(kUsage) when the collbench binary is not there.
void check_collbench_exists(const Tools& tools);

/// Keeps the campaign file as submitted beside its results.
void copy_campaign(const Session& session);

using Records = std::map<std::string, RunRecord>;

/// The manifest's record of `run`, or nullptr when it has none.
const RunRecord* record_of(const Records& records, const std::string& run);

/// The state of `run`: kNone when the manifest has no record of it.
RunRecord::State state_of(const Records& records, const std::string& run);

/// How many of `runs` are in each state.
std::map<RunRecord::State, int> tally(const Records& records, const std::vector<RunSpec>& runs);

/// The exit code of a command over `runs` from the failure kinds the manifest records: 3 when a
/// run failed for any other reason than wrong results, else 1 when one produced wrong results,
/// else 0.
int failure_exit_code(const Records& records, const std::vector<RunSpec>& runs);

}  // namespace collbench::sweep
