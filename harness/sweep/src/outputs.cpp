#include "collbench/sweep/outputs.h"

#include <fmt/format.h>

#include <filesystem>
#include <set>
#include <string>
#include <system_error>
#include <utility>

#include "collbench/error.h"
#include "collbench/text.h"

namespace collbench::sweep {
namespace {

namespace fs = std::filesystem;

// `p` absolute, with links, "." and ".." resolved as far as the path exists.
fs::path resolved(const fs::path& p) {
  std::error_code ec;
  const fs::path absolute = fs::absolute(p, ec);
  if (ec) return p.lexically_normal();
  const fs::path canonical = fs::weakly_canonical(absolute, ec);
  return ec ? absolute.lexically_normal() : canonical;
}

// Whether `p` lies inside `dir` (or is it).
bool inside(const fs::path& p, const fs::path& dir) {
  auto d = dir.begin();
  auto q = p.begin();
  for (; d != dir.end(); ++d, ++q) {
    if (d->empty()) continue;  // a trailing separator
    if (q == p.end() || *q != *d) return false;
  }
  return true;
}

bool same_file(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  const bool same = fs::equivalent(a, b, ec);
  return !ec && same;
}

// The results directory must be one: the first part of it that exists is a directory.
void check_results_directory(const fs::path& root) {
  for (fs::path p = root; !p.empty(); p = p.parent_path()) {
    std::error_code ec;
    const auto st = fs::status(p, ec);
    if (fs::exists(st)) {
      if (!fs::is_directory(st)) {
        throw_usage(
            "the results directory {} cannot be made: {} is a file, not a directory; choose "
            "another --results (or output: in the campaign)",
            shown(root.string(), 300), shown(p.string(), 300));
      }
      return;
    }
    if (p == p.parent_path()) return;
  }
}

}  // namespace

void check_outputs_apart_from_inputs(const Campaign& campaign, const CampaignPaths& paths,
                                     const Tools& tools) {
  check_results_directory(paths.root);

  struct Input {
    std::string what;
    fs::path path;
  };
  std::vector<Input> inputs{{"the campaign file", campaign.file}};
  if (!tools.sbatch_template.empty())
    inputs.push_back({"the sbatch template", tools.sbatch_template});
  // A bare name is looked up on PATH, not in the results.
  if (tools.collbench.string().find('/') != std::string::npos)
    inputs.push_back({"the collbench binary", tools.collbench});
  for (const auto& p : campaign.partitions) {
    const auto env = resolve_site_env(p, campaign, tools);
    if (!env.empty()) inputs.push_back({fmt::format("site_env of partition '{}'", p.label()), env});
  }

  const fs::path root = resolved(paths.root);
  std::set<std::string> collected;
  for (const Where where : {Where::kSlurm, Where::kLocal}) {
    for (const auto& run : expand_matrix(campaign, where))
      collected.insert(paths.collected(run.name).filename().string());
  }

  for (const auto& in : inputs) {
    const fs::path file = resolved(in.path);
    std::string output;
    if (inside(file, root / "runs")) {
      output = "inside runs/, where the campaign keeps every run's files";
    } else if (file == root / paths.manifest().filename() || same_file(in.path, paths.manifest())) {
      output = "the campaign's manifest";
    } else if (file == root / paths.campaign_copy().filename() ||
               same_file(in.path, paths.campaign_copy())) {
      // Copying the campaign file onto itself writes the same bytes: only other inputs clash.
      if (in.what == "the campaign file") continue;
      output = "the copy of the campaign file the campaign keeps";
    } else if (file.parent_path() == root && collected.contains(file.filename().string())) {
      output = "the collected results of a run";
    } else {
      continue;
    }
    throw_usage(
        "{} {} is {} ({}), which collbench-sweep writes; an output must not be one of the "
        "inputs: choose another --results (or output: in the campaign), or move the file",
        in.what, shown(in.path.string(), 300), output, shown(root.string(), 300));
  }
}

}  // namespace collbench::sweep
