// A campaign file: what to measure (collbench tests and options), where (partitions, node
// counts, tasks per node), under which settings (variants) and how often (repeats).
//
//   campaign: p5-efa-study
//   tests: [all_reduce, all_gather]
//   sizes: {min: 8, max: 8G, factor: 2}
//   backend: nccl
//   nodes: [2, 4, 8]
//   tasks_per_node: 8
//   partitions:
//     - {name: p5, instance_type: p5.48xlarge, site_env: aws-p5}
//   variants:
//     - {name: efa, env: {FI_PROVIDER: efa}}
//     - {name: tcp, env: {FI_PROVIDER: tcp}}
//   repeats: 3
//   time_limit: "00:30:00"
//
// Every error names the file, line and column and says how to fix it (exit code 2).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "collbench/sweep/env.h"

namespace collbench::sweep {

/// A place in a campaign file (1-based line and column), for error messages.
struct SourceMark {
  std::string file;
  int line = 0;
  int column = 0;
  /// "file:line:column" (or just "file" when the position is unknown).
  std::string str() const;
};

/// collbench's measurement options; set at the top of the campaign, overridable per variant.
struct MeasureOptions {
  std::optional<std::uint64_t> min_bytes, max_bytes, step_factor, step_bytes;
  std::vector<std::string> dtypes;
  std::vector<std::string> ops;
  std::optional<int> check, iters, warmup;
  std::optional<double> timeout_s;  ///< collbench --timeout
  std::vector<std::string> args;    ///< further collbench arguments, passed as given
  SourceMark args_mark;

  /// `this` with every option that `over` sets replaced by `over`'s.
  MeasureOptions merged(const MeasureOptions& over) const;
};

/// A Slurm partition of the campaign, labelled with the instance type it runs on.
struct Partition {
  std::string name;           ///< empty: the cluster's default partition
  std::string instance_type;  ///< label, e.g. "p5.48xlarge"
  std::string site_env;       ///< site environment file: a name in slurm/env or a path
  std::vector<std::string> sbatch_args;
  SourceMark mark;
  /// The name used in run names and labels ("default" for the cluster's default partition).
  std::string label() const { return name.empty() ? "default" : name; }
};

/// A named set of settings compared against the others.
struct Variant {
  std::string name;
  std::string description;
  EnvSettings env;  ///< in file order; a null value unsets the variable
  MeasureOptions options;
  std::vector<std::string> sbatch_args;
  SourceMark mark;
};

struct Campaign {
  std::filesystem::path file;  ///< where it was read from
  std::string name;
  std::string description;
  std::vector<std::string> tests;  ///< canonical names, or {"all"}
  std::string backend = "nccl";
  MeasureOptions options;
  std::vector<int> nodes;
  std::vector<SourceMark> node_marks;  ///< parallel to nodes
  std::vector<int> tasks_per_node;
  std::vector<Partition> partitions;  ///< at least one (the default partition when none given)
  std::vector<Variant> variants;      ///< at least one ("default" when none given)
  int repeats = 1;
  std::string time_limit;  ///< Slurm --time format; empty: the partition's default
  std::string launcher = "srun";
  std::string container_image;
  std::string container_mounts;
  std::string output = "results";  ///< results root; the campaign writes to <output>/<name>
  std::string collbench;           ///< collbench binary as the nodes see it; empty: default
  std::vector<std::string> sbatch_args;
  bool request_gpus = true;  ///< --gpus-per-node = tasks per node (default: backend nccl)

  /// The collbench arguments of a variant (tests, sizes, options, --backend), without --jsonl.
  std::vector<std::string> collbench_args(const Variant& variant) const;
};

/// What the parser checks beyond the file's own structure.
struct CampaignRules {
  std::vector<std::string> known_tests;  ///< collbench's test names (empty: not checked)
  /// Checks a complete collbench command line (argv[0] included) as collbench would; throws
  /// Error(kUsage) with collbench's message. Empty: not checked.
  std::function<void(const std::vector<std::string>& argv)> check_collbench_args;
};

/// Reads and checks a campaign file. Throws Error(kUsage) whose message starts with
/// "file:line:column:" and ends with the fix.
Campaign load_campaign(const std::filesystem::path& file, const CampaignRules& rules);

/// The same from text (`file` names it in messages).
Campaign parse_campaign(const std::string& text, const std::string& file,
                        const CampaignRules& rules);

/// Limits of a Slurm partition.
struct PartitionLimits {
  std::string name;  ///< the partition's real name (the default partition's, when asked for "")
  int total_nodes = 0;
  std::optional<int> max_nodes;  ///< MaxNodes; nullopt when UNLIMITED
  bool exists = true;            ///< false: Slurm has no partition of that name
};

/// Checks every node count against the partitions' limits; `lookup` returns nullopt when the
/// scheduler cannot tell (then nothing is checked). Throws Error(kUsage) at the node count's mark.
void check_partition_limits(
    const Campaign& campaign,
    const std::function<std::optional<PartitionLimits>(const std::string& partition)>& lookup);

/// Seconds in a Slurm time limit ("30", "30:00", "1:00:00", "1-12", "2-00:00:00"); nullopt when
/// the text is not one.
std::optional<double> parse_slurm_time(const std::string& text);

/// The closest of `candidates` to `word` when it is a plausible typo (for "did you mean").
std::optional<std::string> closest_word(const std::string& word,
                                        const std::vector<std::string>& candidates);

}  // namespace collbench::sweep
