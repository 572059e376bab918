// The result files an invocation reads: every *.jsonl below the directories given (leaving out
// collbench-sweep's manifests), the other tools' output among the *.txt, *.log, *.out and *.json
// there, and the files named, each once, in a stable order.
#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "collbench/error.h"
#include "collbench/files.h"
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

// The extensions other tools' output is usually saved under. Only these are opened to look for
// it below a directory: a campaign also holds logs and much else that is neither.
bool may_hold_other_output(const fs::path& path) {
  static constexpr std::array<std::string_view, 4> kExtensions{".txt", ".log", ".out", ".json"};
  const std::string ext = path.extension().string();
  return std::find(kExtensions.begin(), kExtensions.end(), ext) != kExtensions.end();
}

// The format of the file at `path`, from its first kSniffBytes bytes.
InputFormat sniff_file(const fs::path& path) {
  std::string head(kSniffBytes, '\0');
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return InputFormat::kCollbench;  // the reader reports why it cannot be opened
  head.resize(std::fread(head.data(), 1, head.size(), f));
  std::fclose(f);
  return sniff_format(head);
}

}  // namespace

std::vector<InputFile> list_input_files(const std::vector<std::string>& inputs) {
  std::vector<InputFile> files;
  // Files by identity; by path those that cannot be stat'ed (the reader says why).
  std::set<FileIdentity> seen;
  std::set<std::string> seen_paths;
  for (const auto& input : inputs) {
    std::error_code ec;
    const fs::path path(input);
    const auto status = fs::status(path, ec);
    if (ec || !fs::exists(status)) {
      throw_usage(
          "{}: no such file or directory; give a results directory (e.g. results/<campaign>), "
          "a .jsonl file or another tool's output",
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
        if (!it->is_regular_file(ec)) continue;
        InputFormat format = InputFormat::kCollbench;
        if (it->path().extension() == ".jsonl") {
          // A campaign directory also holds collbench-sweep's manifest: known, not results, and
          // not a problem worth reporting. (Named explicitly, it is diagnosed like any file.)
          if (is_sweep_manifest(it->path())) continue;
        } else if (may_hold_other_output(it->path())) {
          // Taken when another tool's output is recognised, else left alone silently.
          format = sniff_file(it->path());
          if (format == InputFormat::kCollbench) continue;
        } else {
          continue;
        }
        // The iterator's path is `path` and the names below it: no need to resolve either
        // (fs::relative would, on every file, at a system call per path component).
        const auto below = it->path().lexically_relative(path).generic_string();
        found.push_back({it->path().string(), prefix.empty() ? below : prefix + "/" + below,
                         it->path().stem().string(), format});
      }
      if (ec) throw_usage("{}: cannot list the directory ({})", input, ec.message());
      std::sort(found.begin(), found.end(),
                [](const InputFile& a, const InputFile& b) { return a.display < b.display; });
    } else if (!fs::is_regular_file(status)) {
      // A FIFO would block the reader forever, a device (/dev/zero) feed it without end.
      throw_usage(
          "{}: {}, not a results file; give a results directory, a .jsonl file or "
          "another tool's output saved to a file",
          input, describe(file_kind(path)));
    } else {
      found.push_back({input, path.filename().string(), path.stem().string(), sniff_file(path)});
    }
    for (auto& f : found) {
      // The same file named twice (through a link, "./", a second directory argument): one
      // identity, which a single stat gives.
      const auto identity = file_identity(f.path);
      if (identity ? !seen.insert(*identity).second : !seen_paths.insert(f.path).second) continue;
      files.push_back(std::move(f));
    }
  }
  return files;
}

}  // namespace collbench::report
