// Results files as lines: read in blocks, split at '\n', and trimmed of what editors and other
// systems add (a trailing "\r", spaces, a UTF-8 byte order mark).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace collbench::report::detail {

/// Bytes that can be read past the end of every line (the JSON parser reads ahead).
inline constexpr std::size_t kLinePadding = 64;

/// The longest line read: a collbench context of thousands of ranks is a few MB, and a file
/// with no newline for this long (binary data, a device) is not results; reading it on would
/// take all memory.
inline constexpr std::size_t kMaxLineBytes = std::size_t{256} << 20;

/// A line that is not blank, trimmed. kLinePadding readable bytes follow `text`.
struct Line {
  std::string_view text;
  std::uint64_t number = 0;   ///< counting from 1, blank lines included
  bool unterminated = false;  ///< the input's last line, without its newline
};

using LineVisitor = std::function<void(const Line&)>;

class LineReader {
 public:
  struct Result {
    std::uint64_t lines = 0;  ///< lines read, blank ones included
    int error = 0;            ///< errno of a read error that ended the reading, else 0
    bool too_long = false;    ///< line `lines + 1` exceeded kMaxLineBytes: reading ended there
  };

  /// Calls `visit` for every line of `file` that is not blank.
  Result read(std::FILE* file, const LineVisitor& visit);
  /// The same for text held in memory.
  Result read(std::string_view text, const LineVisitor& visit);

 private:
  // One buffer for every file: allocating and clearing a block per file would dominate when a
  // campaign has thousands of small files.
  std::vector<char> buffer_;
};

}  // namespace collbench::report::detail
