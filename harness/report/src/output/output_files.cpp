#include "output/output_files.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <system_error>

#include "collbench/error.h"
#include "collbench/report/results.h"

namespace collbench::report::detail {

namespace fs = std::filesystem;

InputFiles::InputFiles(const std::vector<std::string>& inputs) {
  for (const auto& file : list_input_files(inputs)) {
    if (const auto id = file_identity(file.path)) files_.emplace_back(*id, file.path);
  }
  // The directories named as inputs too: a report written into one would mix with the results
  // (and a later report of that directory would read its own output's neighbours).
  for (const auto& input : inputs) {
    if (file_kind(input) != FileKind::kDirectory) continue;
    if (const auto id = file_identity(input)) files_.emplace_back(*id, input);
  }
}

std::string InputFiles::input_at(const fs::path& path) const {
  const auto id = file_identity(path);
  if (!id) return {};
  for (const auto& [identity, name] : files_) {
    if (identity == *id) return name;
  }
  return {};
}

void check_report_directory(const InputFiles& inputs, const fs::path& dir,
                            const std::vector<std::string>& names) {
  std::error_code ec;
  const auto status = fs::status(dir, ec);
  if (!fs::exists(status)) return;  // a new directory holds no input
  if (const auto input = inputs.input_at(dir); !input.empty()) {
    throw_usage("-o {}: this is the input {}; give a new directory for the report", dir.string(),
                input);
  }
  if (!fs::is_directory(status)) return;  // cannot be created: a runtime failure, said then
  for (const auto& name : names) {
    if (const auto input = inputs.input_at(dir / name); !input.empty()) {
      throw_usage("-o {}: the report's {} would overwrite the input {}; give another -o DIR",
                  dir.string(), name, input);
    }
  }
}

StagedFiles::StagedFiles(fs::path dir, bool create) : dir_(std::move(dir)) {
  if (dir_.empty()) dir_ = ".";
  std::error_code ec;
  if (create) {
    // The directories this creates, so that a failure removes them again.
    std::vector<fs::path> missing;
    for (fs::path p = dir_.lexically_normal(); !p.empty() && p != p.root_path();
         p = p.parent_path()) {
      if (fs::exists(fs::symlink_status(p, ec))) break;
      missing.push_back(p);
      if (p.parent_path() == p) break;
    }
    fs::create_directories(dir_, ec);
    created_.assign(missing.rbegin(), missing.rend());
    if (ec || !fs::is_directory(dir_, ec)) {
      // No destructor runs for a constructor that throws: undo what was made here.
      std::error_code ignored;
      for (auto it = created_.rbegin(); it != created_.rend(); ++it) fs::remove(*it, ignored);
      throw_runtime("cannot create the output directory {}: {}; give a writable -o DIR",
                    dir_.string(), ec ? ec.message() : std::string("a file of that name exists"));
    }
  }
}

StagedFiles::~StagedFiles() {
  std::error_code ec;
  for (const auto& [temp, final_path] : staged_) fs::remove(temp, ec);
  if (committed_) return;
  // Innermost first; a directory that is not empty (someone else's files) stays.
  for (auto it = created_.rbegin(); it != created_.rend(); ++it) fs::remove(*it, ec);
}

void StagedFiles::write(const std::string& name, const std::function<void(const Sink&)>& produce) {
  const fs::path final_path = dir_ / name;
  std::error_code ec;
  if (fs::is_directory(fs::symlink_status(final_path, ec))) {
    // Found now, not when renaming: by then other files would already be in place.
    throw_runtime("cannot write {}: a directory of that name is in the way", final_path.string());
  }
  const fs::path temp = dir_ / fmt::format(".{}.{}.partial", name, ::getpid());
  // "x": never through a file (or link) that is already there.
  std::FILE* f = std::fopen(temp.c_str(), "wbx");
  if (!f) throw_runtime("cannot write {}: {}", final_path.string(), std::strerror(errno));
  {
    std::lock_guard lock(staged_mutex_);
    staged_.emplace_back(temp, final_path);
  }
  try {
    produce([&](std::string_view text) {
      if (std::fwrite(text.data(), 1, text.size(), f) != text.size()) {
        throw_runtime("cannot write {}: {}", final_path.string(), std::strerror(errno));
      }
    });
  } catch (...) {
    std::fclose(f);
    throw;
  }
  // Buffered text meets the disk here: a full disk shows now, or at the close.
  const bool flushed = std::fflush(f) == 0;
  const int error = errno;
  if (std::fclose(f) != 0 || !flushed) {
    throw_runtime("cannot write {}: {}", final_path.string(),
                  std::strerror(flushed ? errno : error));
  }
}

void StagedFiles::write(const std::string& name, std::string_view text) {
  write(name, [text](const Sink& sink) { sink(text); });
}

void StagedFiles::commit() {
  std::error_code ec;
  for (auto it = staged_.begin(); it != staged_.end(); ++it) {
    fs::rename(it->first, it->second, ec);
    if (ec) {
      throw_runtime("cannot write {}: {}", it->second.string(), ec.message());
    }
    it->first.clear();
  }
  staged_.clear();
  committed_ = true;
}

}  // namespace collbench::report::detail
