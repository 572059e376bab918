// Talking to Slurm through its commands (sbatch, squeue, sacct, scontrol), each started as a
// child process from an argv array.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "collbench/sweep/partition_limits.h"

namespace collbench::sweep {

/// What Slurm says about one job.
struct JobState {
  std::string id;
  std::string state;             ///< PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT, ...
  std::string elapsed;           ///< as squeue prints it
  std::string nodes;             ///< node list
  std::string reason;            ///< why pending
  std::optional<int> exit_code;  ///< from sacct, when known
};

/// Slurm's job states grouped by what they mean for a run.
enum class JobPhase { kWaiting, kRunning, kEnded };
JobPhase phase_of(const std::string& slurm_state);

/// The Slurm client commands.
class Slurm {
 public:
  /// Submits with `argv` (argv[0] is sbatch) in environment `env`; returns the job id. Throws
  /// Error(kRuntime) when sbatch is missing, rejects the job, or prints no job id.
  std::string submit(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                     const std::string& what) const;

  /// What squeue (and sacct, when accounting is on) know about these jobs; ids they no longer
  /// know are absent. Throws Error(kRuntime) when squeue is missing or fails.
  std::map<std::string, JobState> query(const std::vector<std::string>& ids) const;

  /// A partition's node limits from `scontrol show partition` ("" = the default partition);
  /// nullopt when scontrol is missing or cannot answer.
  std::optional<PartitionLimits> partition(const std::string& name) const;

  /// The network's tree as `scontrol show topology` prints it (Slurm's topology/tree plugin).
  /// Throws Error(kRuntime) when scontrol is missing or fails.
  std::string topology() const;

  /// Cancels jobs (scancel); for tests and interrupted runs.
  void cancel(const std::vector<std::string>& ids) const;
};

/// Parses `scontrol show partition -o` output (exposed for tests).
std::optional<PartitionLimits> parse_partition_limits(const std::string& scontrol_output,
                                                      const std::string& name);

}  // namespace collbench::sweep
