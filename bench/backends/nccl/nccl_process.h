// What NCCL reads once per process, when its first communicator starts: its logging settings
// (collbench captures the log, nccl_debug_capture.h) and its profiler plugin (collbench's, for
// --algorithms: nccl_profiler.h). The ranks of a process (-t, -g) share both, so the process's
// first rank sets them up and puts the user's environment back once every communicator is up.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "collbench/bootstrap.h"
#include "nccl_debug_capture.h"
#include "nccl_profiler.h"

namespace collbench::nccl {

/// Where the rows' algorithms come from: the profiler, unless the user's own profiler (from the
/// environment or nccl.conf) or logging claims that place. `asked`: --algorithms 1.
AlgorithmSourceChoice choose_algorithms(bool asked, int nccl_version);

/// The run context's account of where the rows' algorithms come from; nullopt when they are not
/// recorded.
std::optional<std::string> algorithms_fact(const AlgorithmSourceChoice& algorithms);

/// The process's NCCL settings as one rank sees them. `process_index`: the rank's place among
/// the ranks of its process (0 sets up and restores); `shared`: the process runs several ranks,
/// which barriers keep out of getenv while the environment changes, and out of NCCL until it is
/// set.
class ProcessSettings {
 public:
  ProcessSettings(Bootstrap& bootstrap, int process_index, bool shared, AlgorithmSource source);

  /// NCCL's log, captured once per process (shared with a --split group's backend that starts
  /// while another still holds it: NCCL opens its log file once per process).
  const std::shared_ptr<DebugCapture>& capture() const { return capture_; }

  /// The user's environment again (the run context records the launch environment), once every
  /// communicator of the process is up: NCCL has read what it needed.
  void restore();

 private:
  Bootstrap& bootstrap_;
  const int process_index_;
  const bool shared_;
  const AlgorithmSource source_;
  std::shared_ptr<DebugCapture> capture_;
  /// The user's NCCL_PROFILER_PLUGIN (STATIC_PLUGIN, or unset) while collbench's is set.
  std::optional<std::string> profiler_before_;
};

}  // namespace collbench::nccl
