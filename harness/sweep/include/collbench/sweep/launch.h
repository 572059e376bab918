// The exact command lines of a run: sbatch with the collbench.sbatch template, or local mpirun.
// Commands are argv arrays plus environment settings; nothing here is ever parsed by a shell.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "collbench/sweep/campaign.h"
#include "collbench/sweep/env.h"
#include "collbench/sweep/matrix.h"

namespace collbench::sweep {

/// Where the programs and files a run needs are.
struct Tools {
  std::filesystem::path collbench;        ///< the benchmark binary (as the nodes see it)
  std::filesystem::path sbatch_template;  ///< slurm/collbench.sbatch
  std::string mpirun = "mpirun";
};

/// A command: argv, and the settings applied to the current environment to run it.
struct Command {
  std::vector<std::string> argv;
  EnvSettings env;
  /// "NAME=value ... argv" shell-quoted, for people to read or paste.
  std::string display() const;
};

/// The site environment file of a partition: a path (containing '/' or ending in .sh) is taken
/// relative to the campaign file's directory; a bare name is <template dir>/env/<name>.sh.
/// Empty when the partition has none.
std::filesystem::path resolve_site_env(const Partition& partition, const Campaign& campaign,
                                       const Tools& tools);

/// Files recorded for one submitted job (patterns expanded with its id).
struct JobPaths {
  std::filesystem::path output;     ///< Slurm's stdout/stderr file
  std::filesystem::path raw_jsonl;  ///< the results the job writes
};

/// A submission of one run, or of a group of runs that differ only in their repeat (a job array
/// whose task index is the repeat).
struct Submission {
  std::vector<const RunSpec*> runs;  ///< one run, or the array's runs by task index
  Command command;
  /// The paths of runs[i] once Slurm returned `job_id` (for arrays: "<array id>_<i>").
  JobPaths paths(std::size_t i, const std::string& job_id) const;
  std::string job_id_of(std::size_t i, const std::string& submitted_id) const;
  bool array = false;
  std::string output_pattern;  ///< with %j (single) or %A/%a (array)
  std::string jsonl_pattern;
};

/// The sbatch submission of `runs` (one run, or several that differ only in repeat when
/// `array`). The job's environment comes from sbatch's own (COLLBENCH_* settings); the variant's
/// variables travel in the run's environment file.
Submission sbatch_submission(const Campaign& campaign, const std::vector<const RunSpec*>& runs,
                             const CampaignPaths& paths, const Tools& tools, bool array);

/// The mpirun command of a local run writing to `jsonl`; `cores` decides --oversubscribe.
Command mpirun_command(const RunSpec& run, const Tools& tools, const std::filesystem::path& jsonl,
                       int cores);

/// Physical cores this process may run on (what Open MPI counts as slots); at least 1.
int usable_cores();

}  // namespace collbench::sweep
