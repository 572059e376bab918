// The run matrix of a campaign (repeats × partitions × node counts × tasks per node ×
// variants) and where each run's files live.
#pragma once

#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "collbench/record.h"
#include "collbench/sweep/campaign.h"

namespace collbench::sweep {

/// Where runs execute: submitted to Slurm, or on this host through mpirun.
enum class Where { kSlurm, kLocal };
/// "slurm", "local" (the manifest records local starts with mode "local").
std::span<const std::string_view> enum_names(Where);

/// One run: one collbench job.
struct RunSpec {
  std::string name;  ///< unique in the campaign: <partition>-n<nodes>x<tasks>-<variant>-r<repeat>
  std::string partition;        ///< Slurm partition ("" = the default one); "local" for local runs
  std::string partition_label;  ///< the label ("default" for the default partition)
  std::string instance_type;
  std::string site_env;
  int nodes = 1;
  int tasks_per_node = 1;
  int repeat = 0;
  std::string variant;
  EnvSettings env;
  std::vector<std::string> collbench_args;        ///< without --jsonl
  std::vector<std::string> sbatch_args;           ///< campaign, partition then variant extras
  NodePlacement placement = NodePlacement::kAny;  ///< the variant's, else the campaign's
  /// placement across: the hosts it asks Slurm for (place_runs, collbench/sweep/placement.h);
  /// empty until placed, and for every other placement.
  std::vector<std::string> nodelist;
  int ranks() const { return nodes * tasks_per_node; }
};

/// The run's name without its "-r<repeat>" suffix: the runs of one job array share it.
std::string base_name(const RunSpec& run);

/// Expands the matrix: repeat outermost (so that slow drifts spread over every variant), then
/// partition, node count, tasks per node and variant. Local runs replace the partitions by one
/// named "local", labelled with this host's instance type.
std::vector<RunSpec> expand_matrix(const Campaign& campaign, Where where);

/// The labels collect adds to every record of a run (and the manifest records with its start).
struct RunLabels {
  std::string campaign;
  std::string variant;
  std::string partition;  ///< the partition's label
  std::string instance_type;
  int repeat = 0;
  int nodes = 0;
  int tasks_per_node = 0;
  std::string run;
  /// Where the run's hosts were on the network's tree ("same-leaf", "across-level-2",
  /// "unknown"): set when collected from Slurm under a campaign with a topology, else empty.
  std::string placement;

  static constexpr auto fields() {
    using L = RunLabels;
    return std::tuple{Field{"campaign", &L::campaign},
                      Field{"variant", &L::variant},
                      Field{"partition", &L::partition},
                      Field{"instance_type", &L::instance_type},
                      Field{"repeat", &L::repeat},
                      Field{"nodes", &L::nodes},
                      Field{"tasks_per_node", &L::tasks_per_node},
                      Field{"run", &L::run},
                      Field{"placement", &L::placement, Presence::kOmittedWhenEmpty}};
  }
};

RunLabels run_labels(const Campaign& campaign, const RunSpec& run);

/// The files of one campaign under the results root:
///   <root>/manifest.jsonl          the record of every submission and outcome (source of truth)
///   <root>/campaign.yaml           the campaign file as last submitted
///   <root>/<run>.jsonl             a run's collected, labelled results
///   <root>/runs/<run>/env          the run's environment file
///   <root>/runs/<run>/slurm-<job>.out, job-<job>/   Slurm output and the raw JSONL
///   <root>/runs/<run>/local-<n>/   a local attempt's output and raw JSONL
/// Raw files end in .jsonl.raw so that readers of <root>/**/*.jsonl see labelled records only.
struct CampaignPaths {
  std::filesystem::path root;

  std::filesystem::path manifest() const { return root / "manifest.jsonl"; }
  std::filesystem::path campaign_copy() const { return root / "campaign.yaml"; }
  std::filesystem::path collected(const std::string& run) const { return root / (run + ".jsonl"); }
  std::filesystem::path run_dir(const std::string& run) const { return root / "runs" / run; }
  std::filesystem::path env_file(const std::string& run) const { return run_dir(run) / "env"; }
  /// Slurm's output file, with %j for the job id (sbatch --output).
  std::filesystem::path slurm_output_pattern(const std::string& run) const {
    return run_dir(run) / "slurm-%j.out";
  }
  /// The raw JSONL written by the job, with %j for the job id (the template expands it).
  std::filesystem::path job_jsonl_pattern(const std::string& run) const {
    return run_dir(run) / "job-%j" / "collbench.jsonl.raw";
  }
  std::filesystem::path local_dir(const std::string& run, int attempt) const {
    return run_dir(run) / ("local-" + std::to_string(attempt));
  }
};

/// `pattern` with every %j replaced by `job_id`.
std::string expand_job_pattern(const std::string& pattern, const std::string& job_id);

/// The paths of a campaign: the results root is `results_root` when given, else the campaign's
/// `output` (relative paths against the current directory), made absolute.
CampaignPaths campaign_paths(const Campaign& campaign, const std::filesystem::path& results_root);

}  // namespace collbench::sweep
