// Why a run failed, as data: the kind decides the exit code and is recorded in the manifest;
// the reason beside it is the sentence people read.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "collbench/error.h"

namespace collbench::sweep {

/// The ways a run fails.
enum class FailureKind {
  kTimeout,       ///< the time limit ended it
  kCancelled,     ///< scancel or an administrator
  kNodeFailure,   ///< Slurm lost a node
  kPreempted,     ///< a higher-priority job took the nodes
  kOutOfMemory,   ///< a task exceeded its memory limit
  kBootFailure,   ///< a node failed to boot
  kNonZeroExit,   ///< collbench or the launcher exited non-zero, not for wrong results
  kWrongResults,  ///< collbench verified and found mismatched elements (its exit status 1)
  kNoOutput,      ///< ended without an exit status or without result rows
};

/// The names the manifest records ("timeout", "node_failure", "wrong_results", ...).
std::span<const std::string_view> enum_names(FailureKind);

/// The words a reason starts with ("timeout", "node failure", "wrong results", ...).
std::string_view failure_words(FailureKind kind);

/// A failed run: what kind of failure, and why in words.
struct Failure {
  FailureKind kind = FailureKind::kNonZeroExit;
  std::string reason;  ///< "<failure_words>: <detail>"
};

/// The failure of `kind` whose reason is "<failure_words(kind)>: <detail>".
Failure failure(FailureKind kind, std::string_view detail);

/// The exit code a failure ends a command with: kCheckFailed for wrong results, kRuntime else.
ExitCode exit_code_of(FailureKind kind);

}  // namespace collbench::sweep
