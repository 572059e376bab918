// Files as the tools read and write them: what kind of file a path names, whether two paths name
// one file however they are spelled, and reading a file whole without ever blocking on a FIFO
// or a device or growing without bound. One mechanism for every tool, so that no input can hang
// one and no two outputs of one run can overwrite each other.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace collbench {

/// What a path names, following symbolic links.
enum class FileKind { kMissing, kRegular, kDirectory, kFifo, kCharDevice, kBlockDevice, kSocket };

/// The kind, in words for a message: "a regular file", "a FIFO", "a directory", ...
std::string_view describe(FileKind kind);

FileKind file_kind(const std::filesystem::path& path);

/// A file however it is spelled: its device and inode.
struct FileIdentity {
  dev_t device = 0;
  ino_t inode = 0;
  auto operator<=>(const FileIdentity&) const = default;
};

/// The identity of the file `path` names, following symbolic links; none when it cannot be
/// stat'ed (missing, or a directory on the way not searchable).
std::optional<FileIdentity> file_identity(const std::filesystem::path& path);

/// Whether `a` and `b` name one file however spelled (relative or absolute, "./", "..", symbolic
/// or hard links): by device and inode when both exist; otherwise by the identity of the
/// directory each would be made in and the name it would have there.
bool same_file(const std::filesystem::path& a, const std::filesystem::path& b);

/// A file read whole, or why it was not.
struct ReadFile {
  enum class Problem { kNone, kMissing, kNotRegular, kTooLarge, kUnreadable };
  Problem problem = Problem::kNone;
  FileKind kind = FileKind::kRegular;  ///< what the path named (kNotRegular: which kind)
  std::string text;
  std::string error;  ///< kUnreadable: the system's message

  explicit operator bool() const { return problem == Problem::kNone; }
  /// The problem in words, naming the bound: "a FIFO, not a regular file", "larger than 16 MiB".
  std::string why(std::uint64_t max_bytes) const;
};

/// Reads `path` whole if it is a regular file of at most `max_bytes`: opened without blocking
/// (a FIFO with no writer would block open() forever) and checked on the open descriptor, so a
/// file swapped for a FIFO in between is caught too, and read no further than the bound (a
/// /proc file says size 0 and may still hold data).
ReadFile read_regular_file(const std::filesystem::path& path, std::uint64_t max_bytes);

/// The bound for the small text files the tools read whole (campaigns, manifests' lines,
/// configuration files): far above any real one, far below what would exhaust memory.
inline constexpr std::uint64_t kSmallFileBytes = std::uint64_t{64} << 20;

}  // namespace collbench
