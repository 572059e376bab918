// POSIX file helpers of the sweep library (not part of its public API): whole-file reads,
// atomic replacement, and asking whether another process holds a file's lock.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace collbench::sweep {

/// The whole file, or nullopt when it cannot be read (errno says why).
std::optional<std::string> read_file(const std::filesystem::path& file);

/// A temporary name beside `file`, unique to this process (".<name>.<pid>.tmp"): written first,
/// then renamed over `file`, so that readers see the old or the complete new file.
std::filesystem::path temporary_beside(const std::filesystem::path& file);

/// Replaces `file` (creating its directory) with `bytes`, with permissions `mode`, atomically.
/// Throws Error(kRuntime) when it cannot.
void write_file_atomic(const std::filesystem::path& file, const std::string& bytes, int mode);

/// True when another process holds a flock on `file` (a local run holds its manifest's).
bool locked_elsewhere(const std::filesystem::path& file);

}  // namespace collbench::sweep
