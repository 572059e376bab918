#include "nccl_profiler.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <link.h>

#include <array>
#include <new>

#include "nccl_rules.h"
#include "nccl_text.h"

namespace collbench::nccl {
namespace {

using profiler_abi::EventDescrV5;
using profiler_abi::EventStateArgsV5;
using profiler_abi::Logger;
using profiler_abi::Result;

/// What the plugin keeps per communicator: NCCL passes it back with every event.
struct CommunicatorContext {
  int rank = 0;
};

// --- the plugin's table. Each entry returns quickly and never fails NCCL's call: a profiler
// that cannot record makes rows without an algorithm, not a failed run.

Result plugin_init(void** context, std::uint64_t /*comm_id*/, int* activation_mask,
                   const char* /*comm_name*/, int /*nodes*/, int /*nranks*/, int rank,
                   Logger /*log*/) {
  auto* ctx = new (std::nothrow) CommunicatorContext{rank};
  *context = ctx;
  // NCCL keeps one mask for all communicators; every init sets it again.
  *activation_mask = ctx ? ProfilerRecorder::instance().started_communicator() : 0;
  return profiler_abi::kSuccess;
}

Result plugin_start_event(void* context, void** handle, EventDescrV5* event) {
  // No handle: NCCL then neither stops the event nor records its states.
  *handle = nullptr;
  const auto* ctx = static_cast<const CommunicatorContext*>(context);
  if (ctx && event && event->type == static_cast<std::uint64_t>(profiler_abi::kColl)) {
    ProfilerRecorder::instance().record(ctx->rank, *event);
  }
  return profiler_abi::kSuccess;
}

Result plugin_stop_event(void* /*handle*/) { return profiler_abi::kSuccess; }

Result plugin_record_event_state(void* /*handle*/, int /*state*/, EventStateArgsV5* /*args*/) {
  return profiler_abi::kSuccess;
}

Result plugin_finalize(void* context) {
  delete static_cast<CommunicatorContext*>(context);
  return profiler_abi::kSuccess;
}

}  // namespace

AlgorithmSourceChoice choose_algorithm_source(const AlgorithmSourceInputs& in) {
  if (!in.asked) {
    return {in.user_logs_tuning ? AlgorithmSource::kTuningLog : AlgorithmSource::kNone, ""};
  }
  // The user's TUNING lines are there anyway: adding a profiler would change NCCL's run for
  // nothing.
  if (in.user_logs_tuning) return {AlgorithmSource::kTuningLog, ""};
  if (in.nccl_version < kProfilerV5Version) {
    return {AlgorithmSource::kTuningLog,
            fmt::format("NCCL {} predates the profiler interface collbench uses (v5, NCCL 2.27)",
                        version_string(in.nccl_version))};
  }
  if (in.user_profiler && *in.user_profiler != "STATIC_PLUGIN") {
    const std::string setting = fmt::format(
        "NCCL_PROFILER_PLUGIN={}{}", *in.user_profiler,
        in.user_profiler_origin.empty() ? "" : " (from " + in.user_profiler_origin + ")");
    // NCCL compares "none" without regard to case.
    return {AlgorithmSource::kTuningLog,
            lower(*in.user_profiler) == "none"
                ? fmt::format("{} turns NCCL's profilers off", setting)
                : fmt::format("{} is the user's profiler, and NCCL loads only one", setting)};
  }
  if (!in.user_profiler && !in.default_profiler.empty()) {
    return {AlgorithmSource::kTuningLog,
            fmt::format("{} is the profiler NCCL loads by default, and NCCL loads only one",
                        in.default_profiler)};
  }
  return {AlgorithmSource::kProfiler, ""};
}

std::string_view source_name(AlgorithmSource source) {
  switch (source) {
    case AlgorithmSource::kProfiler:
      return "profiler";
    case AlgorithmSource::kTuningLog:
      return "tuning_log";
    case AlgorithmSource::kNone:
      break;
  }
  return "";
}

std::string default_profiler_library(const std::string& name) {
  // NCCL opens the library by the loader's rules (RTLD_NOW | RTLD_LOCAL), then asks for its
  // newest interface first.
  void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) return "";
  bool exports = false;
  for (int v = 1; v <= 7 && !exports; ++v) {
    exports = dlsym(handle, fmt::format("ncclProfiler_v{}", v).c_str()) != nullptr;
  }
  std::string path = name;
  if (link_map* map = nullptr; dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name) {
    path = map->l_name;
  }
  dlclose(handle);
  return exports ? path : "";
}

std::size_t profiler_datatype_size(std::string_view datatype) {
  struct Entry {
    std::string_view name;
    std::size_t size;
  };
  static constexpr std::array<Entry, 13> kSizes = {{{"ncclInt8", 1},
                                                    {"ncclUint8", 1},
                                                    {"Unknown", 1},
                                                    {"ncclInt32", 4},
                                                    {"ncclUint32", 4},
                                                    {"ncclInt64", 8},
                                                    {"ncclUint64", 8},
                                                    {"ncclFloat16", 2},
                                                    {"ncclFloat32", 4},
                                                    {"ncclFloat64", 8},
                                                    {"ncclBfloat16", 2},
                                                    {"ncclFloat8e4m3", 1},
                                                    {"ncclFloat8e5m2", 1}}};
  for (const Entry& e : kSizes) {
    if (e.name == datatype) return e.size;
  }
  return 0;
}

std::optional<TuningLine> coll_event_call(const EventDescrV5& event) {
  const auto& c = event.coll;
  if (!c.func || !c.algorithm || !c.datatype) return std::nullopt;
  const std::size_t size = profiler_datatype_size(c.datatype);
  if (size == 0 || *c.func == '\0' || *c.algorithm == '\0') return std::nullopt;
  TuningLine call;
  call.collective = c.func;
  call.bytes = static_cast<std::uint64_t>(c.count) * size;
  call.algorithm = canonical_name(c.algorithm);
  call.protocol = c.protocol ? canonical_name(c.protocol) : "";
  if (!is_algorithm(call.algorithm) && call.protocol.empty()) {
    // A symmetric-memory kernel names its variant where the algorithm would be.
    call.kind = TuningKind::kSymmetric;
    call.algorithm = c.algorithm;
  }
  if (c.channels > 0) {
    call.channel_lo = 0;
    call.channel_hi = c.channels - 1;
  }
  return call;
}

ProfilerRecorder& ProfilerRecorder::instance() {
  static ProfilerRecorder recorder;
  return recorder;
}

void ProfilerRecorder::set_recording(bool on) {
  const std::lock_guard lock(mutex_);
  recording_ = on;
}

std::uint64_t ProfilerRecorder::communicators() const {
  const std::lock_guard lock(mutex_);
  return communicators_;
}

int ProfilerRecorder::started_communicator() {
  const std::lock_guard lock(mutex_);
  ++communicators_;
  return recording_ ? profiler_abi::kColl : 0;
}

void ProfilerRecorder::record(int rank, const EventDescrV5& event) {
  // Every rank of a communicator sees its collectives; one account per call is enough.
  if (rank != 0) return;
  const auto call = coll_event_call(event);
  const std::lock_guard lock(mutex_);
  if (recording_ && call) calls_.add(*call);
}

TuningLog ProfilerRecorder::take() {
  const std::lock_guard lock(mutex_);
  TuningLog out = std::move(calls_);
  calls_.clear();
  return out;
}

}  // namespace collbench::nccl

extern "C" {
// NOLINTNEXTLINE(readability-identifier-naming): the name NCCL looks up.
const collbench::nccl::profiler_abi::ProfilerV5 ncclProfiler_v5 = {
    "collbench",
    collbench::nccl::plugin_init,
    collbench::nccl::plugin_start_event,
    collbench::nccl::plugin_stop_event,
    collbench::nccl::plugin_record_event_state,
    collbench::nccl::plugin_finalize,
};
}
