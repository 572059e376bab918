// The algorithm and protocol of each collective call, from NCCL's profiler plugin interface.
//
// NCCL (2.23+) hands a profiler plugin one "Coll" event per collective it schedules, with the
// algorithm, protocol, channels and warps it chose. collbench links such a plugin into its own
// executable (nccl_profiler_abi.h) and points NCCL at it with
// NCCL_PROFILER_PLUGIN=STATIC_PLUGIN while its communicators start. Unlike the TUNING log
// (nccl_tuning.h), this costs no log line per call, and the events are typed.
//
// NCCL loads one profiler per process. When the user has one of their own (NCCL_PROFILER_PLUGIN,
// e.g. NCCL Inspector, or a libnccl-profiler.so that NCCL would load by default), collbench stands
// aside and reads the TUNING log instead. CUDA- and NCCL-free: tests call the plugin's table as
// NCCL does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "nccl_profiler_abi.h"
#include "nccl_tuning.h"

namespace collbench::nccl {

/// Where the rows' algorithms come from.
enum class AlgorithmSource {
  kNone,       ///< not recorded
  kProfiler,   ///< collbench's profiler plugin
  kTuningLog,  ///< NCCL's TUNING log lines
};

/// What decides the source, read before NCCL starts.
struct AlgorithmSourceInputs {
  bool asked = false;             ///< --algorithms 1
  bool user_logs_tuning = false;  ///< the user's NCCL_DEBUG* already log TUNING (logs_tuning)
  int nccl_version = 0;           ///< ncclGetVersion's code, e.g. 22809
  /// NCCL_PROFILER_PLUGIN as NCCL would read it: the environment, else NCCL's nccl.conf files
  /// (which NCCL applies only to variables the environment leaves unset, so collbench's own
  /// setting would hide theirs).
  std::optional<std::string> user_profiler;
  std::string user_profiler_origin;  ///< "" for the environment, else the file(s)
  /// A libnccl-profiler.so that NCCL would load when NCCL_PROFILER_PLUGIN is unset
  /// (default_profiler_library); empty when there is none.
  std::string default_profiler;
};

struct AlgorithmSourceChoice {
  AlgorithmSource source = AlgorithmSource::kNone;
  /// Why the TUNING log stands in for the profiler ("" otherwise), for the run context.
  std::string why;
};

/// NCCL version from which collbench's plugin (interface v5) loads.
inline constexpr int kProfilerV5Version = 22700;

/// The profiler when it was asked for and nothing else claims NCCL's one profiler slot; the
/// TUNING log when the profiler cannot be used, or when the user's own logging already carries
/// it (recording then changes nothing NCCL does); kNone when not asked.
AlgorithmSourceChoice choose_algorithm_source(const AlgorithmSourceInputs& in);

/// "profiler", "tuning_log", "" (a row's RowAlgorithm::source).
std::string_view source_name(AlgorithmSource source);

/// The profiler library NCCL opens when NCCL_PROFILER_PLUGIN is unset (`name` on the loader's
/// path), when it loads and exports a profiler interface NCCL knows (ncclProfiler_v1 ... v7):
/// its path, or "" when there is none.
std::string default_profiler_library(const std::string& name = "libnccl-profiler.so");

/// Element size of a datatype as NCCL's profiler names it ("ncclFloat32" -> 4). NCCL 2.28 names
/// ncclUint8 "Unknown" (ncclDatatypeToString has no case for it); collbench calls no other
/// type NCCL would name so, so "Unknown" is one byte. 0 for anything else.
std::size_t profiler_datatype_size(std::string_view datatype);

/// One Coll event as a TUNING-log call (same collective names and byte counts, so row lookups
/// are shared): nullopt when the event lacks a function, an algorithm or a known datatype. A
/// symmetric kernel (no protocol, an algorithm that is none of NCCL's) is a kSymmetric call.
std::optional<TuningLine> coll_event_call(const profiler_abi::EventDescrV5& event);

/// What the plugin saw, process-wide (NCCL loads one profiler per process and calls it from its
/// own threads as well as the caller's).
class ProfilerRecorder {
 public:
  static ProfilerRecorder& instance();

  /// Whether the plugin asks NCCL for Coll events when a communicator starts (init).
  void set_recording(bool on);
  /// Communicators NCCL has started the plugin for, since the process began.
  std::uint64_t communicators() const;

  /// The calls recorded since the last take(), then forgets them. Only rank 0 of each
  /// communicator records (as only rank 0 logs TUNING lines): one entry per call.
  TuningLog take();

  // --- the plugin's entry points (nccl_profiler.cpp)
  /// A communicator started: the activation mask for NCCL.
  int started_communicator();
  /// An event of rank `rank` of its communicator.
  void record(int rank, const profiler_abi::EventDescrV5& event);

 private:
  mutable std::mutex mutex_;
  bool recording_ = false;
  std::uint64_t communicators_ = 0;
  TuningLog calls_;
};

}  // namespace collbench::nccl
