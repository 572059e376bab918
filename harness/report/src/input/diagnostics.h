// The input problems of one file while it is read: counted per kind, the first few of each kind
// kept, and held back until the file ends, so that a file without a single collbench record
// becomes one line instead of one per line.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "collbench/report/results.h"

namespace collbench::report::detail {

inline constexpr std::size_t kKindCount = static_cast<std::size_t>(Diagnostic::Kind::kImported) + 1;

/// What one line turned out to be.
struct LineOutcome {
  enum Kind {
    kResult,    ///< a result row, read
    kContext,   ///< a context record (read separately, see context_reader.h)
    kSyntax,    ///< not JSON; `message` says why
    kForeign,   ///< JSON, but not a collbench record; `message` says why
    kRejected,  ///< a collbench record that cannot be used: `diagnostic` and `message`
  } kind = kResult;
  Diagnostic::Kind diagnostic = Diagnostic::Kind::kBadRecord;
  std::string message;
};

class FileDiagnostics {
 public:
  /// The file read_results lists as `set.files[index]`, shown as `display`.
  FileDiagnostics(std::uint32_t index, std::string display);

  std::uint32_t index() const { return index_; }

  /// A problem on `line` (0: the whole file).
  void add(Diagnostic::Kind kind, std::uint64_t line, std::string message);
  /// Counts the line `line` by what it was, and adds its problem when it has one.
  void count(const LineOutcome& outcome, std::uint64_t line, bool unterminated);
  /// Counts a row read from another tool's output: the file holds results, it is not foreign.
  void count_record() { ++records_; }
  /// Moves the file's problems into `set`.
  void finish(ResultSet& set);

 private:
  void finish_foreign(ResultSet& set);

  std::uint32_t index_;
  std::string display_;
  std::uint64_t records_ = 0;  ///< collbench records (used or not)
  std::uint64_t other_lines_ = 0;
  std::vector<Diagnostic> pending_;
  std::array<std::size_t, kKindCount> kept_{};
  std::array<std::uint64_t, kKindCount> counts_{};
};

/// Appends `diagnostic` to `set` and counts it.
void add_diagnostic(ResultSet& set, Diagnostic diagnostic);

}  // namespace collbench::report::detail
