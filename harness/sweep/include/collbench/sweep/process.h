// Child processes started from argv arrays (never through a shell), with a chosen environment,
// captured or redirected output and a bounded run time.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "collbench/record.h"

namespace collbench::sweep {

/// Which launch a process is, told apart from a later process that reuses its pid: its pid (the
/// id of the session it leads), its start time in clock ticks after boot, and the boot.
struct LaunchId {
  int pid = 0;
  std::uint64_t start_ticks = 0;
  std::string boot_id;
  bool operator==(const LaunchId&) const = default;

  static constexpr auto fields() {
    using L = LaunchId;
    return std::tuple{Field{"pid", &L::pid}, Field{"start_ticks", &L::start_ticks},
                      Field{"boot_id", &L::boot_id}};
  }
};

/// What to run and how.
struct ProcessSpec {
  ProcessSpec() = default;
  ProcessSpec(std::vector<std::string> argv_in,
              std::optional<std::vector<std::string>> env_in = std::nullopt,
              std::optional<std::filesystem::path> output_file_in = std::nullopt,
              double timeout_s_in = 0, double grace_s_in = 5)
      : argv(std::move(argv_in)),
        env(std::move(env_in)),
        output_file(std::move(output_file_in)),
        timeout_s(timeout_s_in),
        grace_s(grace_s_in) {}

  std::vector<std::string> argv;  ///< argv[0] is looked up on PATH when it has no '/'
  /// The complete environment ("NAME=value" strings); nullopt inherits this process's.
  std::optional<std::vector<std::string>> env;
  /// When set, stdout and stderr are appended to this file instead of being captured.
  std::optional<std::filesystem::path> output_file;
  double timeout_s = 0;  ///< 0: no limit. On expiry: SIGTERM, then SIGKILL after grace_s
  double grace_s = 5;
  /// Put the child in its own process group (killed as a group on timeout).
  bool new_process_group = true;
  /// Run the child as the leader of a session of its own, watched by a supervisor process that
  /// outlives us: when this process dies, by any signal including SIGKILL, the supervisor ends
  /// every process of that session (SIGTERM, then SIGKILL after grace_s), so that nothing the
  /// child launched keeps running. For launchers: Open MPI's mpirun puts each rank in a process
  /// group of its own, but they all stay in its session. A time limit ends the whole session.
  bool supervised = false;
  /// With `supervised`: called once the child runs, with its identity.
  std::function<void(const LaunchId&)> on_start;
};

/// How a child ended.
struct ProcessResult {
  int exit_code = -1;  ///< exit status, or -1 when killed by a signal
  int signal = 0;      ///< the signal that ended it, or 0
  bool timed_out = false;
  std::string out;  ///< captured stdout (empty when redirected)
  std::string err;  ///< captured stderr (empty when redirected)

  bool ok() const { return exit_code == 0; }
  /// "exit status 3", "killed by signal 9 (Killed)", "timed out after 10 s".
  std::string describe() const;
};

/// The full path of `name` found on PATH (or `name` itself when it contains '/' and is
/// executable); nullopt when there is none.
std::optional<std::filesystem::path> find_program(const std::string& name);

/// Runs the process to completion. Throws Error(kRuntime) when it cannot be started (the message
/// names the program and why); a program that starts and fails is reported in the result.
ProcessResult run_process(const ProcessSpec& spec);

/// This process's environment as "NAME=value" strings.
std::vector<std::string> current_environment();

/// The identity of the running process `pid`, or nullopt when there is none.
std::optional<LaunchId> identify_process(int pid);

/// The processes still running (zombies aside) in the session that `launch` led, started by it
/// or after it, in this boot: what is left of a supervised launch. Empty once it is all gone.
std::vector<int> launch_processes(const LaunchId& launch);

}  // namespace collbench::sweep
