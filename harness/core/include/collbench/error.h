// The one error type collbench throws, and the process exit codes (DESIGN §6, README).
#pragma once

#include <fmt/format.h>

#include <array>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

namespace collbench {

/// Process exit codes, documented in the README.
enum class ExitCode : int {
  kOk = 0,
  kCheckFailed = 1,  ///< the measurement failed its checks (wrong data, regression, ...)
  kUsage = 2,        ///< bad usage or bad input file
  kRuntime = 3,      ///< timeout, lost rank, transport not as required, library error
};

/// Names of the exit codes (for messages between ranks, collbench/record.h).
inline std::span<const std::string_view> enum_names(ExitCode) {
  static constexpr std::array<std::string_view, 4> kNames{"ok", "check_failed", "usage", "runtime"};
  return kNames;
}

/// Who throws an error: the rank that found it, or every rank of the job at once (a failure the
/// ranks agreed on through the bootstrap). A job whose every rank is ending can end cleanly,
/// each rank returning the code; one that cannot agree must be aborted (MPI_Abort).
enum class Reach { kThisRank, kEveryRank };

/// An error with the exit code it should end the process with. The message is one line meant
/// for the user: it names the bad input and the fix.
class Error : public std::runtime_error {
 public:
  Error(ExitCode code, std::string message, Reach reach = Reach::kThisRank)
      : std::runtime_error(std::move(message)), code_(code), reach_(reach) {}
  ExitCode code() const { return code_; }
  /// Thrown by every rank of the job together.
  bool every_rank() const { return reach_ == Reach::kEveryRank; }

 private:
  ExitCode code_;
  Reach reach_;
};

/// Throws an Error with ExitCode::kUsage.
template <typename... Args>
[[noreturn]] void throw_usage(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(ExitCode::kUsage, fmt::format(format, std::forward<Args>(args)...));
}

/// Throws an Error with ExitCode::kRuntime.
template <typename... Args>
[[noreturn]] void throw_runtime(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(ExitCode::kRuntime, fmt::format(format, std::forward<Args>(args)...));
}

inline int exit_status(ExitCode code) { return static_cast<int>(code); }

}  // namespace collbench
