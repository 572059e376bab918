#include "nccl_process.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "collbench/doctor/system_facts.h"

namespace collbench::nccl {

AlgorithmSourceChoice choose_algorithms(bool asked, int nccl_version) {
  AlgorithmSourceInputs in;
  in.asked = asked;
  in.user_logs_tuning = logs_tuning(DebugSettings::from_environment());
  in.nccl_version = nccl_version;
  in.user_profiler = env("NCCL_PROFILER_PLUGIN");
  if (asked && !in.user_profiler) {
    const doctor::NcclConf conf = doctor::read_nccl_conf(doctor::this_process_paths());
    if (const auto it = conf.values.find("NCCL_PROFILER_PLUGIN"); it != conf.values.end()) {
      in.user_profiler = it->second;
      in.user_profiler_origin = fmt::format("{}", fmt::join(conf.files, " or "));
    }
  }
  if (asked && !in.user_profiler) in.default_profiler = default_profiler_library();
  return choose_algorithm_source(in);
}

std::optional<std::string> algorithms_fact(const AlgorithmSourceChoice& algorithms) {
  switch (algorithms.source) {
    case AlgorithmSource::kProfiler:
      // NCCL gives up on a profiler quietly (an old interface, a symbol it cannot find).
      if (ProfilerRecorder::instance().communicators() == 0) {
        return "not recorded: NCCL did not load collbench's profiler plugin "
               "(NCCL_PROFILER_PLUGIN=STATIC_PLUGIN)";
      }
      return "NCCL's profiler interface (collbench's plugin, NCCL_PROFILER_PLUGIN=STATIC_PLUGIN "
             "while the communicators started)";
    case AlgorithmSource::kTuningLog:
      return algorithms.why.empty()
                 ? std::string("NCCL's TUNING log")
                 : fmt::format("NCCL's TUNING log, not the profiler: {}", algorithms.why);
    case AlgorithmSource::kNone:
      break;
  }
  return std::nullopt;
}

namespace {
// The process's capture and the lock around it and the environment.
std::mutex process_mutex;
std::weak_ptr<DebugCapture> process_capture;
}  // namespace

ProcessSettings::ProcessSettings(Bootstrap& bootstrap, int process_index, bool shared,
                                 AlgorithmSource source)
    : bootstrap_(bootstrap), process_index_(process_index), shared_(shared), source_(source) {
  if (shared_) bootstrap_.barrier();
  if (process_index_ == 0) {
    const std::lock_guard lock(process_mutex);
    capture_ = process_capture.lock();
    if (!capture_) {
      capture_ = std::make_shared<DebugCapture>(bootstrap_.hostname(), stdout,
                                                source_ == AlgorithmSource::kTuningLog);
      process_capture = capture_;
    }
    if (source_ == AlgorithmSource::kProfiler) {
      ProfilerRecorder::instance().set_recording(true);
      profiler_before_ = env("NCCL_PROFILER_PLUGIN");
      setenv("NCCL_PROFILER_PLUGIN", "STATIC_PLUGIN", 1);
    }
  }
  if (shared_) bootstrap_.barrier();
  const std::lock_guard lock(process_mutex);
  if (!capture_) capture_ = process_capture.lock();
}

void ProcessSettings::restore() {
  if (shared_) bootstrap_.barrier();
  if (process_index_ == 0) {
    capture_->restore_environment();
    if (source_ == AlgorithmSource::kProfiler) set_env("NCCL_PROFILER_PLUGIN", profiler_before_);
  }
  if (shared_) bootstrap_.barrier();
}

}  // namespace collbench::nccl
