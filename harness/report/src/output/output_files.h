// Where collbench-report's files go. Two rules hold for every output:
// - an output is never one of the inputs: files are compared by identity (device and inode),
//   not by spelling, so links, "./" and relative paths cannot hide it; refused before anything
//   is written;
// - a failure part-way leaves no partial report: every file is written under a temporary name
//   beside its final one and renamed into place only when all of them were written; otherwise
//   the temporary files (and any directory created for them) are removed.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collbench/files.h"
#include "collbench/report/report.h"

namespace collbench::report::detail {

/// The input files of an invocation, by identity.
class InputFiles {
 public:
  /// Every file read_results reads for `inputs` (and every file named in them), and every
  /// directory among `inputs`.
  explicit InputFiles(const std::vector<std::string>& inputs);
  /// The input `path` is (as the command line or directory listing names it), or "" when
  /// `path` does not exist or is no input.
  std::string input_at(const std::filesystem::path& path) const;

 private:
  std::vector<std::pair<FileIdentity, std::string>> files_;  ///< with the name shown
};

/// Refuses (Error kUsage) a report directory `dir` that is one of the inputs, and any of
/// `names` in it that would overwrite an input.
void check_report_directory(const InputFiles& inputs, const std::filesystem::path& dir,
                            const std::vector<std::string>& names);

/// Files written into one directory, all or none. write() may be called from several threads.
class StagedFiles {
 public:
  /// Files for `dir`, created with its missing parents when `create` (else it must exist).
  StagedFiles(std::filesystem::path dir, bool create);
  /// Removes every file not committed, and the directories created for them.
  ~StagedFiles();
  StagedFiles(const StagedFiles&) = delete;
  StagedFiles& operator=(const StagedFiles&) = delete;

  /// Writes the file `name` (a plain name, fixed by the report) under a temporary name;
  /// `produce` hands its text to the sink. Throws Error(kRuntime) naming the file on failure.
  void write(const std::string& name, const std::function<void(const Sink&)>& produce);
  void write(const std::string& name, std::string_view text);
  /// Renames every written file to its name.
  void commit();

 private:
  std::filesystem::path dir_;
  std::vector<std::filesystem::path> created_;  ///< directories made, outermost first
  std::mutex staged_mutex_;  ///< for staged_, which write() extends from any thread
  std::vector<std::pair<std::filesystem::path, std::filesystem::path>> staged_;  ///< temp, final
  bool committed_ = false;
};

}  // namespace collbench::report::detail
