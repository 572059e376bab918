// The exact command lines of a run: sbatch with the collbench.sbatch template, or local mpirun.
// Commands are argv arrays plus environment settings; nothing here is ever parsed by a shell.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "collbench/record.h"
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

/// The `collbench doctor` command of a local run (mode not kOff): one process on this host, its
/// JSON report written to `report`, --strict in strict mode, under the run's own variables (so
/// that its NCCL_* checks see what the benchmark will).
Command doctor_command(DoctorMode mode, const RunSpec& run, const Tools& tools,
                       const std::filesystem::path& report);

/// One environment setting of a run definition: a value, or null to unset the variable.
struct EnvEntry {
  std::string name;
  std::optional<std::string> value;
  bool operator==(const EnvEntry&) const = default;

  static constexpr auto fields() {
    using E = EnvEntry;
    return std::tuple{Field{"name", &E::name}, Field{"value", &E::value}};
  }
};

/// What defines a run: everything that decides what it measures and how it is launched. The
/// manifest records it with each submission and local start, so that a campaign edited after it
/// ran is noticed: results measured under another definition are not the run's any more. The
/// tools (collbench's path, mpirun), the results' paths and the time limit are not part of it.
struct RunDefinition {
  std::vector<std::string> collbench_args;  ///< tests, sizes, iterations, ... (without --jsonl)
  std::vector<EnvEntry> env;                ///< the variant's settings
  int nodes = 0;
  int tasks_per_node = 0;
  // Slurm runs only (empty for local runs):
  std::string partition;
  std::vector<std::string> sbatch_args;
  std::string launcher;
  std::string site_env;
  std::string container_image;
  /// The campaign's doctor: key; empty when off, so that manifests written before it existed
  /// still match campaigns without a doctor.
  std::string doctor;
  /// The run's placement: ("same-leaf", "across"); empty when any, so that manifests written
  /// before it existed still match campaigns without one. Slurm runs only.
  std::string placement;
  bool operator==(const RunDefinition&) const = default;

  static constexpr auto fields() {
    using D = RunDefinition;
    constexpr auto kOmit = Presence::kOmittedWhenEmpty;
    return std::tuple{Field{"collbench_args", &D::collbench_args},
                      Field{"env", &D::env},
                      Field{"nodes", &D::nodes},
                      Field{"tasks_per_node", &D::tasks_per_node},
                      Field{"partition", &D::partition, kOmit},
                      Field{"sbatch_args", &D::sbatch_args, kOmit},
                      Field{"launcher", &D::launcher, kOmit},
                      Field{"site_env", &D::site_env, kOmit},
                      Field{"container_image", &D::container_image, kOmit},
                      Field{"doctor", &D::doctor, kOmit},
                      Field{"placement", &D::placement, kOmit}};
  }
};

/// The definition of `run` as the campaign now describes it, for Slurm or local runs.
RunDefinition run_definition(const Campaign& campaign, const RunSpec& run, Where where);

/// What differs between a run's recorded definition and its current one, in words:
/// "collbench arguments `all_reduce -e 1M` -> `all_reduce -e 4M`; nodes 1 -> 2". Empty when
/// they are equal.
std::string describe_change(const RunDefinition& recorded, const RunDefinition& now);

/// Physical cores this process may run on (what Open MPI counts as slots); at least 1.
int usable_cores();

}  // namespace collbench::sweep
