// What every collbench-sweep subcommand works on: the campaign, its runs, its results and
// manifest, and the programs it runs; and the helpers they share (not part of the library's
// public API).
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "collbench/sweep/campaign.h"
#include "collbench/sweep/commands.h"
#include "collbench/sweep/launch.h"
#include "collbench/sweep/manifest.h"
#include "collbench/sweep/matrix.h"

namespace collbench::sweep {

using Records = std::map<std::string, RunRecord>;

struct Session {
  Campaign campaign;
  std::vector<RunSpec> runs;
  std::set<std::string> local_runs;  ///< the names of those of `runs` that are local runs
  CampaignPaths paths;
  Manifest manifest{std::filesystem::path()};
  Tools tools;
};

/// Which runs a command works on.
enum class Scope {
  kOwn,       ///< the local matrix with s.local, else the Slurm one (plan, submit, run)
  kRecorded,  ///< with s.local the local matrix; else the Slurm matrix and the local runs the
              ///< manifest records, or only the local matrix when it records local runs and no
              ///< Slurm run (status, wait, collect: one view of both kinds)
};

/// Loads the campaign of `s` and works out its runs, paths and tools.
Session open_session(const SweepSettings& s, Scope scope = Scope::kOwn);

/// Where `run` of the session runs.
Where where_of(const Session& session, const RunSpec& run);

/// How a recorded run stands once checked against the campaign as it is now and the files.
struct Standing {
  RunRecord::State state = RunRecord::State::kNone;  ///< as recorded
  /// Non-empty when the campaign changed what defines the run since it was submitted or
  /// started: what changed (describe_change). Its results, if any, are not the run's.
  std::string changed;
  bool lost = false;      ///< collected, but its results file is gone
  std::vector<int> live;  ///< started locally: the processes of its launch still running
  /// Collected, unchanged, and its results file is there.
  bool done() const { return state == RunRecord::State::kCollected && changed.empty() && !lost; }
  /// Its results (or its failure) no longer stand for the run as defined now: do it again.
  bool stale() const { return !changed.empty() || lost; }
};

/// The runs' records: the manifest's, with the results files on disk as the truth where the
/// manifest has lost it. A run the manifest does not know, or knows only as submitted or started
/// before its results file was written, is collected when that file holds its complete results
/// (holds_collected_results): a deleted, emptied or cut manifest must not send finished runs to
/// be measured again and their results overwritten.
Records load_records(const Session& session);

Standing standing_of(const Session& session, const Records& records, const RunSpec& run);

/// How many of the session's runs are done (Standing::done).
int done_count(const Session& session, const Records& records);

/// "<campaign> changed since this run was started: ..." or "its results file X was deleted".
std::string stale_reason(const Session& session, const Standing& standing, const RunSpec& run);

/// Prints one line to the command's output, at once.
void print(const SweepSettings& s, const std::string& line);

/// The manifest's lock, saying so when another collbench-sweep makes us wait for it.
ManifestLock lock_manifest(const Session& session, const SweepSettings& s);

/// Throws Error(kUsage) when the collbench binary is not there.
void check_collbench_exists(const Tools& tools);

/// Keeps the campaign file as submitted beside its results.
void copy_campaign(const Session& session);

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
