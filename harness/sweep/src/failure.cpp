#include "collbench/sweep/failure.h"

#include <fmt/format.h>

#include <array>

namespace collbench::sweep {
namespace {

constexpr std::array<std::string_view, 9> kNames{"timeout",       "cancelled",     "node_failure",
                                                 "preempted",     "out_of_memory", "boot_failure",
                                                 "non_zero_exit", "wrong_results", "no_output"};
constexpr std::array<std::string_view, 9> kWords{"timeout",       "cancelled",     "node failure",
                                                 "preempted",     "out of memory", "boot failure",
                                                 "non-zero exit", "wrong results", "no output"};

}  // namespace

std::span<const std::string_view> enum_names(FailureKind) { return kNames; }

std::string_view failure_words(FailureKind kind) {
  return kWords.at(static_cast<std::size_t>(kind));
}

Failure failure(FailureKind kind, std::string_view detail) {
  return Failure{kind, fmt::format("{}: {}", failure_words(kind), detail)};
}

ExitCode exit_code_of(FailureKind kind) {
  return kind == FailureKind::kWrongResults ? ExitCode::kCheckFailed : ExitCode::kRuntime;
}

}  // namespace collbench::sweep
