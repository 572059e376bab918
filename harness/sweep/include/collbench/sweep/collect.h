// Deciding how a job ended, and bringing its results under the campaign with labels.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/context.h"
#include "collbench/sweep/failure.h"
#include "collbench/sweep/slurm.h"

namespace collbench::sweep {

/// How one submitted job stands.
struct Outcome {
  enum class Kind { kWaiting, kRunning, kSucceeded, kFailed };
  Kind kind = Kind::kWaiting;
  std::optional<FailureKind> failure;  ///< what kind of failure (kind kFailed)
  /// Why it failed, as Failure::reason ("timeout: ...", "wrong results: ..."), or what it is
  /// doing.
  std::string detail;
  std::filesystem::path raw_jsonl;  ///< where the job writes its results
  std::filesystem::path output;     ///< the job's stdout/stderr file
};

/// The job's files as the sbatch template leaves them.
struct JobFiles {
  std::filesystem::path output;     ///< Slurm's output file
  std::filesystem::path raw_jsonl;  ///< the results; exit_status lies beside it
};

/// Decides a job's outcome from what Slurm says (nullopt: Slurm no longer knows the job) and the
/// files the job left: the template's exit_status, the output file's slurmstepd messages and the
/// results. Slurm's verdict (time limit, cancel, node failure) wins over the exit status, which
/// wins over guesses from the files.
Outcome job_outcome(const std::optional<JobState>& slurm, const JobFiles& files);

/// The failure slurmstepd reported in a job's output (timeout, cancelled, node failure,
/// preempted, out of memory), or nullopt when there is none.
std::optional<FailureKind> failure_from_output(std::string_view output);

/// What a results file holds.
struct ResultsSummary {
  std::size_t contexts = 0;
  std::size_t results = 0;
  std::uint64_t wrong = 0;  ///< mismatched elements over all result rows
  /// Lines that are not a record (a row cut short by a crash), and context or result lines that
  /// collbench's result model (RunContext, ResultRow) cannot read.
  std::size_t bad_lines = 0;
};

/// Reads a JSONL results file (nullopt when it does not exist).
std::optional<ResultsSummary> summarize_results(const std::filesystem::path& jsonl);

/// Whether `file` holds the complete, labelled results of run `run` of campaign `campaign`, as
/// collecting writes them: every line a record, a context and at least one result row, each
/// labelled with that campaign and run. Such a file is the truth about the run, whatever the
/// manifest says (it may have been deleted, emptied or cut short by a crash).
bool holds_collected_results(const std::filesystem::path& file, const std::string& campaign,
                             const std::string& run);

/// Why a run with this non-zero exit status failed: wrong results when the results hold
/// mismatches (collbench's exit status 1), a non-zero exit otherwise (an exit status 1 without
/// mismatches comes from the launcher, not from verification).
Failure describe_failed_exit(int status, const std::optional<ResultsSummary>& results);

/// The hosts the run of a results file ran on: its first run context's hosts, in its order;
/// empty when the file cannot be read or holds no context collbench's result model reads.
std::vector<HostRecord> context_hosts(const std::filesystem::path& jsonl);

/// Copies `raw` to `dest` adding `labels` to every record (context and result); lines that are
/// not JSON are dropped and counted. Writes a temporary file and renames it, so `dest` is either
/// the old or the complete new file.
ResultsSummary write_labelled(const std::filesystem::path& raw, const std::filesystem::path& dest,
                              const nlohmann::json& labels);

/// The last `max_bytes` of a file ("" when unreadable).
std::string read_tail(const std::filesystem::path& file, std::size_t max_bytes);

}  // namespace collbench::sweep
