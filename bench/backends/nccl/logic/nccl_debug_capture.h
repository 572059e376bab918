// Captures NCCL's debug log without taking it away from the user.
//
// NCCL reads NCCL_DEBUG, NCCL_DEBUG_SUBSYS and NCCL_DEBUG_FILE once, at its first log line. Before
// the first NCCL call collbench points them at a per-rank temporary file at INFO level (keeping
// the user's own level and subsystems when they asked for more), restores the environment once
// the communicator is up, parses what NCCL wrote (nccl_log.h) and forwards the lines the user's
// own settings would have shown to where they would have gone (their NCCL_DEBUG_FILE, else
// stdout). NCCL keeps writing to the capture file for the rest of the run; poll() forwards the
// new lines. CUDA- and NCCL-free: the tests play NCCL's part by writing to the file.
#pragma once

#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nccl_log.h"
#include "nccl_settings.h"
#include "nccl_tuning.h"

namespace collbench::nccl {

/// An environment variable's value; nullopt when it is unset.
std::optional<std::string> env(const char* name);
/// Sets `name` to `value`, or unsets it when `value` is nullopt (puts a saved value back).
void set_env(const char* name, const std::optional<std::string>& value);

/// NCCL's log levels, in NCCL's order.
enum class LogLevel { kNone, kVersion, kWarn, kInfo, kAbort, kTrace };

/// NCCL_DEBUG as NCCL reads it (case-insensitive; unset or unknown: kNone).
LogLevel parse_level(const std::optional<std::string>& text);

/// The user's own logging settings (nullopt: unset).
struct DebugSettings {
  std::optional<std::string> level;   ///< NCCL_DEBUG
  std::optional<std::string> subsys;  ///< NCCL_DEBUG_SUBSYS
  std::optional<std::string> file;    ///< NCCL_DEBUG_FILE
  static DebugSettings from_environment();
};

/// What collbench sets while NCCL initialises.
struct CaptureEnvironment {
  std::string level;  ///< NCCL_DEBUG
  std::optional<std::string>
      subsys;        ///< NCCL_DEBUG_SUBSYS (nullopt: leave the user's value / unset)
  std::string file;  ///< NCCL_DEBUG_FILE
  /// True when the capture logs subsystems the user excluded: they may then see extra INIT lines
  /// (NCCL's lines do not name their subsystem, so they cannot be filtered out again).
  bool superset = false;
};

/// INIT carries the lines collbench needs ("Using network", channel connections, the plugin
/// lines, NCCL's "nNodes" line); ENV the effective settings (nccl_settings.h), taken whenever
/// the user's subsystems change anyway or the user does not see the log; TUNING (`tuning`) one
/// line per collective call (nccl_tuning.h), which costs time on small messages. The user's
/// level is kept when it shows at least INFO.
CaptureEnvironment capture_environment(const DebugSettings& user, const std::string& capture_path,
                                       bool tuning = false);

/// Whether the user's own settings already log NCCL's TUNING lines (INFO or TRACE, with TUNING
/// or ALL among the subsystems): recording them then costs nothing more.
bool logs_tuning(const DebugSettings& user);

/// Decides, line by line, what the user's level would have printed, and how: with VERSION or
/// WARN NCCL prints the banner bare ("NCCL version 2.28.3+cuda13.0"), and a blank line before
/// each WARN.
class LineFilter {
 public:
  explicit LineFilter(LogLevel user) : user_(user) {}
  /// The text to forward for one captured line (without its newline), or nullopt.
  std::optional<std::string> forward(std::string_view line);

 private:
  LogLevel user_;
  bool last_kept_ = false;  ///< unclassified lines (a message's continuation) follow their head
};

/// NCCL_DEBUG_FILE expanded as NCCL does: %h host name (up to its first '.', with '%' and '/'
/// replaced by '-'), %p process id, %% a percent sign.
std::string expand_debug_file(std::string_view pattern, std::string_view hostname, int pid);

/// One capture, from before NCCL's first call to the end of the run. NCCL logs once per process,
/// so the ranks of a process with several (-t, -g) share one capture: its members may be called
/// from any thread.
class DebugCapture {
 public:
  /// Creates the capture file (in TMPDIR, else /tmp) and sets the environment. `out` is where
  /// forwarded lines go when the user named no NCCL_DEBUG_FILE (NCCL's default, stdout);
  /// `tuning` adds NCCL's TUNING subsystem (capture_environment).
  explicit DebugCapture(std::string hostname, std::FILE* out = stdout, bool tuning = false);
  ~DebugCapture();
  DebugCapture(const DebugCapture&) = delete;
  DebugCapture& operator=(const DebugCapture&) = delete;

  /// Puts the user's NCCL_DEBUG* back (NCCL has read them by now). Idempotent.
  void restore_environment();
  /// Reads what NCCL appended since the last call: parses it and forwards what the user asked for.
  void poll();

  LogFacts facts() const;
  /// The settings NCCL and its plugin logged (NCCL_DEBUG_SUBSYS with ENV and INIT).
  EffectiveSettings settings() const;
  /// The TUNING lines seen since the last call (rank 0 only; needs TUNING: the constructor's
  /// `tuning`, or the user's NCCL_DEBUG_SUBSYS), which it then forgets: call it at each section
  /// boundary.
  TuningLog take_tuning();
  /// Whether NCCL wrote anything to the capture file.
  bool captured() const;
  const std::string& path() const { return path_; }
  const CaptureEnvironment& environment() const { return env_; }
  /// The last NCCL WARN lines (for error messages), newest last.
  std::vector<std::string> recent_warnings(std::size_t n) const;

 private:
  void poll_locked();
  void emit(const std::string& text);

  mutable std::mutex mutex_;  ///< every member below env_ (set once, in the constructor)

  std::string hostname_;
  std::FILE* default_out_;
  DebugSettings user_;
  CaptureEnvironment env_;
  LineFilter filter_;
  std::string path_;
  int fd_ = -1;
  std::string pending_;  ///< a partial line waiting for its newline
  LogFacts facts_;
  EffectiveSettings settings_;
  TuningLog tuning_;
  bool restored_ = false;
  std::FILE* user_file_ =
      nullptr;  ///< the user's NCCL_DEBUG_FILE, opened at the first forwarded line
  bool user_file_failed_ = false;
};

}  // namespace collbench::nccl
