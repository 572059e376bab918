// Child processes started from argv arrays (never through a shell), with a chosen environment,
// captured or redirected output and a bounded run time.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace collbench::sweep {

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
  /// Put the child in its own process group (killed as a group on timeout). Off for children
  /// that should receive the terminal's Ctrl-C with us (local mpirun).
  bool new_process_group = true;
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

}  // namespace collbench::sweep
