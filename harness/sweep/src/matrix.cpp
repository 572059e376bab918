#include "collbench/sweep/matrix.h"

#include <fmt/format.h>

#include "collbench/system.h"

namespace collbench::sweep {

std::span<const std::string_view> enum_names(Where) {
  static constexpr std::string_view kNames[] = {"slurm", "local"};
  return kNames;
}

std::string base_name(const RunSpec& run) {
  const std::string suffix = fmt::format("-r{}", run.repeat);
  return run.name.substr(0, run.name.size() - suffix.size());
}

std::vector<RunSpec> expand_matrix(const Campaign& campaign, Where where) {
  std::vector<Partition> partitions = campaign.partitions;
  if (where == Where::kLocal) {
    std::string type = instance_type();
    partitions = {Partition{"local", type.empty() ? "local" : type, "", {}, {}}};
  }
  std::vector<RunSpec> runs;
  for (int repeat = 0; repeat < campaign.repeats; ++repeat) {
    for (const auto& p : partitions) {
      for (int nodes : campaign.nodes) {
        for (int tasks : campaign.tasks_per_node) {
          for (const auto& v : campaign.variants) {
            RunSpec r;
            r.partition = p.name;
            r.partition_label = p.label();
            r.instance_type = p.instance_type;
            r.site_env = p.site_env;
            r.nodes = nodes;
            r.tasks_per_node = tasks;
            r.repeat = repeat;
            r.variant = v.name;
            r.placement = campaign.placement_of(v);
            r.env = v.env;
            r.collbench_args = campaign.collbench_args(v);
            r.sbatch_args = campaign.sbatch_args;
            r.sbatch_args.insert(r.sbatch_args.end(), p.sbatch_args.begin(), p.sbatch_args.end());
            r.sbatch_args.insert(r.sbatch_args.end(), v.sbatch_args.begin(), v.sbatch_args.end());
            r.name =
                fmt::format("{}-n{}x{}-{}-r{}", r.partition_label, nodes, tasks, v.name, repeat);
            runs.push_back(std::move(r));
          }
        }
      }
    }
  }
  return runs;
}

RunLabels run_labels(const Campaign& campaign, const RunSpec& run) {
  // The placement label is known only once the run ran (collect).
  return RunLabels{campaign.name,      run.variant, run.partition_label,
                   run.instance_type,  run.repeat,  run.nodes,
                   run.tasks_per_node, run.name,    ""};
}

std::string expand_job_pattern(const std::string& pattern, const std::string& job_id) {
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size() && pattern[i + 1] == 'j') {
      out += job_id;
      ++i;
    } else {
      out += pattern[i];
    }
  }
  return out;
}

CampaignPaths campaign_paths(const Campaign& campaign, const std::filesystem::path& results_root) {
  const std::filesystem::path root =
      results_root.empty() ? std::filesystem::path(campaign.output) : results_root;
  return CampaignPaths{std::filesystem::absolute(root / campaign.name).lexically_normal()};
}

}  // namespace collbench::sweep
