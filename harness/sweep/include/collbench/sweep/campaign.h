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
//   doctor: check
//   topology: slurm
//   placement: same-leaf
//
// Every error names the file, line and column and says how to fix it (exit code 2).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/request.h"
#include "collbench/sweep/env.h"

namespace collbench::sweep {

/// A place in a campaign file (1-based line and column), for error messages.
struct SourceMark {
  std::string file;
  int line = 0;
  int column = 0;
  /// Where the value really is when it came through a YAML alias (*name): the anchor (&name),
  /// written before the place that uses it; 0 when it did not.
  int anchor_line = 0, anchor_column = 0;
  /// "file:line:column" (or just "file" when the position is unknown), and the anchor's
  /// position when there is one.
  std::string str() const;
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

/// Where a run's nodes sit on the network's tree (the placement: key).
enum class NodePlacement {
  kAny,       ///< wherever Slurm puts them
  kSameLeaf,  ///< under one leaf switch (sbatch --switches=1@<switch_wait>)
  kAcross,    ///< on at least two leaf switches (sbatch --nodelist, drawn over the leaves)
};

/// The campaign file's word for a placement: "any", "same-leaf", "across".
std::string_view placement_name(NodePlacement placement);

/// The placement a word names, or nullopt.
std::optional<NodePlacement> parse_placement(std::string_view word);

/// Where a campaign's network tree comes from (the topology: key).
struct TopologySource {
  enum class Kind {
    kNone,   ///< no topology: placement must be any, and runs get no placement label
    kFile,   ///< a file: Slurm's topology.conf (or saved `scontrol show topology` output)
    kSlurm,  ///< what `scontrol show topology` prints when it is needed
  };
  Kind kind = Kind::kNone;
  std::string file;  ///< kFile: as written; relative paths are relative to the campaign file
  SourceMark mark;   ///< where the key's value is
  /// topology_hosts: with EC2's describe-instance-topology JSON, the "HOST INSTANCE-ID" file
  /// that names each instance's host (relative to the campaign file); empty: none.
  std::string hosts_file;
  SourceMark hosts_mark;
};

/// A named set of settings compared against the others.
struct Variant {
  std::string name;
  std::string description;
  EnvSettings env;         ///< in file order; a null value unsets the variable
  MeasureRequest request;  ///< what it measures differently from the campaign
  SourceMark args_mark;    ///< where its args: are
  std::vector<std::string> sbatch_args;
  /// Its own placement: (a study of the same runs on one leaf and across leaves); nullopt: the
  /// campaign's.
  std::optional<NodePlacement> placement;
  SourceMark placement_mark;  ///< where its placement: is
  SourceMark mark;
};

/// What `collbench doctor` does before each run of a campaign (the campaign's doctor: key).
enum class DoctorMode {
  kOff,      ///< no doctor
  kCheck,    ///< run it (its report beside the results) and measure whatever it finds
  kRequire,  ///< a failed doctor, or one that cannot run, fails the run before it measures
  kStrict,   ///< as kRequire, with `doctor --strict`: its warnings fail the run too
};

/// The campaign file's word for a mode: "off", "check", "require", "strict".
std::string_view doctor_mode_name(DoctorMode mode);

/// The mode a word names, or nullopt.
std::optional<DoctorMode> parse_doctor_mode(std::string_view word);

struct Campaign {
  std::filesystem::path file;  ///< where it was read from
  std::string name;
  std::string description;
  std::vector<std::string> tests;  ///< canonical names, or {"all"}
  std::string backend = "nccl";
  MeasureRequest request;  ///< sizes, types and counts of every variant; tests and backend apart
  SourceMark args_mark;    ///< where its args: are
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
  /// --gpus-per-node = tasks per node (default: when the backend uses GPUs)
  bool request_gpus = true;
  DoctorMode doctor = DoctorMode::kOff;           ///< `collbench doctor` before every run
  NodePlacement placement = NodePlacement::kAny;  ///< every variant's unless it has its own
  SourceMark placement_mark;                      ///< where placement: is (the file's top if not)
  TopologySource topology;                        ///< where the network's tree comes from
  std::string switch_wait = "30:00";  ///< how long Slurm may wait for one switch (Slurm time)

  /// The placement of a variant's runs: its own, else the campaign's.
  NodePlacement placement_of(const Variant& variant) const {
    return variant.placement.value_or(placement);
  }

  /// The collbench arguments of a variant (tests, sizes, options, --backend), without --jsonl.
  std::vector<std::string> collbench_args(const Variant& variant) const;

  /// A file a key names as the campaign gives it: relative to the campaign file's directory when
  /// relative; absolute and lexically normal.
  std::filesystem::path beside(const std::filesystem::path& path) const;
};

/// A backend collbench has, as campaigns name it.
struct KnownBackend {
  std::string name;        ///< "nccl", "mpi", "ofi"
  bool uses_gpus = false;  ///< one GPU per rank: jobs ask for --gpus-per-node by default
};

/// What the parser checks beyond the file's own structure.
struct CampaignRules {
  std::vector<std::string> known_tests;  ///< collbench's test names (empty: not checked)
  /// collbench's backends, in the order messages list them (empty: any name is accepted and
  /// none asks for GPUs by default).
  std::vector<KnownBackend> backends;
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

}  // namespace collbench::sweep
