// The result files an invocation reads: every *.jsonl below the directories given (leaving out
// collbench-sweep's manifests) and the files named, each once, in a stable order.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "collbench/error.h"
#include "collbench/report/results.h"

namespace collbench::report {

namespace fs = std::filesystem;

namespace {

/// True when the file's first line is a collbench-sweep manifest record.
bool is_sweep_manifest(const fs::path& path) {
  std::ifstream in(path);
  std::string first;
  std::getline(in, first);
  return first.find("\"collbench-sweep-manifest\"") != std::string::npos;
}

}  // namespace

std::vector<InputFile> list_input_files(const std::vector<std::string>& inputs) {
  std::vector<InputFile> files;
  std::set<std::string> seen;
  for (const auto& input : inputs) {
    std::error_code ec;
    const fs::path path(input);
    const auto status = fs::status(path, ec);
    if (ec || !fs::exists(status)) {
      throw_usage(
          "{}: no such file or directory; give a results directory (e.g. results/<campaign>) "
          "or a .jsonl file",
          input);
    }
    std::vector<InputFile> found;
    if (fs::is_directory(status)) {
      // Files are named by the directory's own name plus the path below it, so that two
      // campaigns' "run1.jsonl" stay apart and the names do not depend on where the tree lives.
      fs::path base = path.lexically_normal();
      if (base.filename().empty()) base = base.parent_path();
      std::string prefix = base.filename().string();
      if (prefix.empty() || prefix == "." || prefix == "..") {
        prefix = fs::weakly_canonical(path, ec).filename().string();
      }
      for (auto it = fs::recursive_directory_iterator(
               path, fs::directory_options::skip_permission_denied, ec);
           !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (!it->is_regular_file(ec) || it->path().extension() != ".jsonl") continue;
        // A campaign directory also holds collbench-sweep's manifest: known, not results, and
        // not a problem worth reporting. (Named explicitly, it is diagnosed like any file.)
        if (is_sweep_manifest(it->path())) continue;
        const auto below = fs::relative(it->path(), path, ec).generic_string();
        found.push_back({it->path().string(), prefix.empty() ? below : prefix + "/" + below,
                         it->path().stem().string()});
      }
      if (ec) throw_usage("{}: cannot list the directory ({})", input, ec.message());
      std::sort(found.begin(), found.end(),
                [](const InputFile& a, const InputFile& b) { return a.display < b.display; });
    } else {
      found.push_back({input, path.filename().string(), path.stem().string()});
    }
    for (auto& f : found) {
      const auto canonical = fs::weakly_canonical(f.path, ec).string();
      if (!seen.insert(ec ? f.path : canonical).second) continue;  // the same file named twice
      files.push_back(std::move(f));
    }
  }
  return files;
}

}  // namespace collbench::report
