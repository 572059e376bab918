#include "input/diagnostics.h"

#include <fmt/format.h>

#include <string_view>
#include <utility>

namespace collbench::report {

std::string_view name(Diagnostic::Kind kind) {
  switch (kind) {
    case Diagnostic::Kind::kUnreadable:
      return "unreadable";
    case Diagnostic::Kind::kNotCollbench:
      return "not collbench";
    case Diagnostic::Kind::kTruncated:
      return "truncated";
    case Diagnostic::Kind::kInvalidJson:
      return "invalid JSON";
    case Diagnostic::Kind::kNewerSchema:
      return "newer schema";
    case Diagnostic::Kind::kBadRecord:
      return "bad record";
    case Diagnostic::Kind::kDuplicate:
      return "duplicate";
    case Diagnostic::Kind::kFailedStatus:
      return "failed status";
    case Diagnostic::Kind::kNoContext:
      return "no context";
    case Diagnostic::Kind::kImported:
      return "imported";
  }
  return "?";
}

std::uint64_t ResultSet::count(Diagnostic::Kind kind) const {
  const auto index = static_cast<std::size_t>(kind);
  return index < diagnostic_counts.size() ? diagnostic_counts[index] : 0;
}

namespace detail {

void add_diagnostic(ResultSet& set, Diagnostic diagnostic) {
  ++set.diagnostic_counts[static_cast<std::size_t>(diagnostic.kind)];
  set.diagnostics.push_back(std::move(diagnostic));
}

FileDiagnostics::FileDiagnostics(std::uint32_t index, std::string display)
    : index_(index), display_(std::move(display)) {}

void FileDiagnostics::add(Diagnostic::Kind kind, std::uint64_t line, std::string message) {
  const auto k = static_cast<std::size_t>(kind);
  ++counts_[k];
  if (kept_[k] >= kDiagnosticsKeptPerFileAndKind) return;
  ++kept_[k];
  pending_.push_back({kind, display_, line, std::move(message)});
}

void FileDiagnostics::count(const LineOutcome& outcome, std::uint64_t line, bool unterminated) {
  switch (outcome.kind) {
    case LineOutcome::kResult:
    case LineOutcome::kContext:
      ++records_;
      return;
    case LineOutcome::kSyntax:
      if (unterminated) {
        add(Diagnostic::Kind::kTruncated, line,
            "last line ends mid-record (the run was probably interrupted); skipped");
      } else {
        add(Diagnostic::Kind::kInvalidJson, line,
            fmt::format("not valid JSON ({}); skipped", outcome.message));
      }
      ++other_lines_;
      return;
    case LineOutcome::kForeign:
      add(Diagnostic::Kind::kNotCollbench, line, fmt::format("{}; skipped", outcome.message));
      ++other_lines_;
      return;
    case LineOutcome::kRejected:
      // A collbench record that cannot be used still makes this a collbench file.
      ++records_;
      add(outcome.diagnostic, line, outcome.message);
      return;
  }
}

void FileDiagnostics::finish(ResultSet& set) {
  if (records_ == 0 && other_lines_ > 0) {
    finish_foreign(set);
    return;
  }
  for (std::size_t k = 0; k < kKindCount; ++k) {
    set.diagnostic_counts[k] += counts_[k];
    if (counts_[k] > kept_[k]) {
      // Say how many were not listed, so nothing disappears silently.
      pending_.push_back({static_cast<Diagnostic::Kind>(k), display_, 0,
                          fmt::format("{} more line(s) like the above ({} in all)",
                                      counts_[k] - kept_[k], counts_[k])});
    }
  }
  for (auto& d : pending_) set.diagnostics.push_back(std::move(d));
}

// Nothing in the file was a collbench record: one line says so, quoting the first problem.
void FileDiagnostics::finish_foreign(ResultSet& set) {
  const Diagnostic* first = nullptr;
  for (const auto& d : pending_) {
    if (d.kind != Diagnostic::Kind::kUnreadable) {
      first = &d;
      break;
    }
  }
  std::string inner = first ? first->message : "";
  constexpr std::string_view kSkipped = "; skipped";
  if (inner.ends_with(kSkipped)) inner.resize(inner.size() - kSkipped.size());
  const std::string why = first ? fmt::format(" (line {}: {})", first->line, inner) : "";
  Diagnostic whole{Diagnostic::Kind::kNotCollbench, display_, 0,
                   fmt::format("not a collbench results file: none of its {} line(s) is a "
                               "collbench record{}; skipped",
                               other_lines_, why)};
  const bool truncated_only =
      other_lines_ == 1 && first && first->kind == Diagnostic::Kind::kTruncated;
  if (truncated_only) whole = *first;
  for (const auto& d : pending_) {
    if (d.kind == Diagnostic::Kind::kUnreadable) add_diagnostic(set, d);
  }
  add_diagnostic(set, std::move(whole));
}

}  // namespace detail
}  // namespace collbench::report
