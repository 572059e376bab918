// The collbench-sweep subcommands: plan, submit, status, wait, collect, run (--local) and hunt.
// Each returns the process exit code; bad input throws collbench::Error.
#pragma once

#include <cstdio>
#include <filesystem>
#include <string>

#include "collbench/sweep/campaign.h"
#include "collbench/sweep/hunt.h"

namespace collbench::sweep {

/// Settings shared by every subcommand.
struct SweepSettings {
  std::filesystem::path campaign_file;
  CampaignRules rules;
  std::filesystem::path results_root;  ///< empty: the campaign's `output`
  std::filesystem::path collbench;     ///< empty: campaign's `collbench`, else next to this program
  std::filesystem::path sbatch_template;  ///< empty: slurm/collbench.sbatch of this checkout
  std::filesystem::path program_dir;      ///< the directory of collbench-sweep (for defaults)
  std::string mpirun = "mpirun";
  bool local = false;  ///< the local matrix (run --local, plan --local, status --local)
  std::FILE* out = stdout;
  bool tty = false;  ///< out is a terminal: progress redraws one line
  double lock_timeout_s = 600;
};

struct SubmitSettings {
  bool dry_run = false;       ///< print what would be submitted; touch nothing
  bool retry_failed = false;  ///< submit failed runs again
  bool array = false;         ///< submit the repeats of a run as one job array
};

struct WaitSettings {
  double timeout_s = 0;   ///< 0: no limit
  double interval_s = 5;  ///< between squeue polls
};

struct LocalSettings {
  bool retry_failed = false;  ///< run failed runs again
  bool redo = false;          ///< run every run again, replacing collected results
};

/// The subcommands of collbench-sweep.
enum class Subcommand { kPlan, kSubmit, kStatus, kWait, kCollect, kRun, kHunt };

/// One invocation of collbench-sweep: which subcommand, with what settings.
struct SweepCommand {
  Subcommand subcommand = Subcommand::kPlan;
  SweepSettings settings;
  SubmitSettings submit;
  WaitSettings wait;
  LocalSettings local;
  HuntSettings hunt;  ///< hunt (which takes no campaign)
  bool json = false;  ///< status --json
};

/// Runs the command (`run` is run_local with settings.local, else run_slurm); returns the exit
/// code.
int run_command(const SweepCommand& command);

/// Prints the run matrix and each run's exact command line (with partition limits checked).
int plan(const SweepSettings& settings);
/// Submits every run not yet submitted (failed ones too with retry_failed); records job ids.
int submit(const SweepSettings& settings, const SubmitSettings& submit);
/// Per-run state and counts; JSON with `json`.
int status(const SweepSettings& settings, bool json);
/// Waits until no submitted run is pending or running, showing progress.
int wait(const SweepSettings& settings, const WaitSettings& wait);
/// Collects finished runs' results with labels and records failed runs with their reason.
int collect(const SweepSettings& settings);
/// Runs the matrix through local mpirun, collecting as it goes.
int run_local(const SweepSettings& settings, const LocalSettings& local);
/// submit, wait and collect.
int run_slurm(const SweepSettings& settings, const SubmitSettings& submit,
              const WaitSettings& wait);

}  // namespace collbench::sweep
