#include "profiler.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <link.h>
#include <strings.h>
#include <sys/types.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include "nccl_log.h"

namespace collbench::stand_in::profiler {
namespace {

// NCCL's published profiler interface, version 5 (its src/include/plugin/profiler/profiler_v5.h),
// written out here from that header and not from collbench's own declaration of it: the point is
// to find out whether collbench's agrees with NCCL's.
constexpr std::uint64_t kGroup = 1 << 0;
constexpr std::uint64_t kColl = 1 << 1;
constexpr std::uint64_t kP2p = 1 << 2;

struct DescriptorV5 {
  std::uint64_t type;
  void* parent_obj;
  int rank;
  union {
    struct {
      bool graph_captured;
      int group_depth;
    } group_api;
    struct {
      const char* func;
      std::size_t count;
      const char* datatype;
      int root;
      void* stream;
      bool graph_captured;
    } coll_api;
    struct {
      const char* func;
      std::size_t count;
      const char* datatype;
      void* stream;
      bool graph_captured;
    } p2p_api;
    struct {
      void* stream;
    } kernel_launch;
    struct {
      std::uint64_t seq_number;
      const char* func;
      const void* send_buff;
      void* recv_buff;
      std::size_t count;
      int root;
      const char* datatype;
      std::uint8_t n_channels;
      std::uint8_t n_warps;
      const char* algo;
      const char* proto;
      void* parent_group;
    } coll;
    struct {
      const char* func;
      void* buff;
      const char* datatype;
      std::size_t count;
      int peer;
      std::uint8_t n_channels;
      void* parent_group;
    } p2p;
    struct {
      pid_t pid;
      std::uint8_t channel_id;
      int peer;
      int n_steps;
      int chunk_size;
      int is_send;
    } proxy_op;
    struct {
      int step;
    } proxy_step;
    struct {
      std::uint8_t channel_id;
      std::uint64_t p_timer;
    } kernel_ch;
    struct {
      std::int64_t id;
      void* data;
    } net_plugin;
  };
};

using Logger = void (*)(int, unsigned long, const char*, int, const char*, ...);

struct TableV5 {
  const char* name;
  int (*init)(void** context, std::uint64_t comm_id, int* activation_mask, const char* comm_name,
              int nodes, int nranks, int rank, Logger log);
  int (*start_event)(void* context, void** handle, DescriptorV5* descr);
  int (*stop_event)(void* handle);
  int (*record_event_state)(void* handle, int state, void* args);
  int (*finalize)(void* context);
};

enum class Status { kReady, kLoaded, kFailed };

struct Host {
  std::mutex mutex;
  Status status = Status::kReady;
  int references = 0;
  void* library = nullptr;
  const TableV5* table = nullptr;
  std::atomic<int> mask{0};  ///< ncclProfilerEventMask: the last init's activation mask
};

Host& host() {
  static Host* h = new Host;
  return *h;
}

/// NCCL's openPluginLib for the profiler: the name as given (STATIC_PLUGIN: the program itself),
/// else libnccl-profiler-<name>.so for a bare name; nullptr and an INFO line when none opens.
void* open_library(const char* name) {
  std::string tried;
  const std::string first = name && *name ? name : "libnccl-profiler.so";
  const auto attempt = [&](const std::string& candidate) -> void* {
    const bool self = strncasecmp(candidate.c_str(), "STATIC_PLUGIN", candidate.size()) == 0;
    void* handle = dlopen(self ? nullptr : candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) tried += " " + candidate;
    return handle;
  };
  if (void* h = attempt(first)) return h;
  if (name && *name && !std::strchr(name, '/') &&
      !(std::strncmp(name, "lib", 3) == 0 ||
        (std::strlen(name) >= 3 && std::strcmp(name + std::strlen(name) - 3, ".so") == 0))) {
    if (void* h = attempt(fmt::format("libnccl-profiler-{}.so", name))) return h;
  }
  nccl_log::info(nccl_log::kInit, fmt::format("PROFILER/Plugin: Could not find:{}", tried));
  return nullptr;
}

/// NCCL's ncclProfilerPluginLoad, under the host's lock.
void load(Host& h) {
  if (h.status == Status::kFailed) return;
  if (h.status == Status::kLoaded) {
    ++h.references;
    return;
  }
  const char* name = std::getenv("NCCL_PROFILER_PLUGIN");
  if (name) {
    nccl_log::info(nccl_log::kEnv,
                   fmt::format("NCCL_PROFILER_PLUGIN set by environment to {}", name));
    if (strcasecmp(name, "none") == 0) {
      h.status = Status::kFailed;
      return;
    }
  }
  void* library = open_library(name);
  if (!library) {
    h.status = Status::kFailed;
    return;
  }
  const auto* table = static_cast<const TableV5*>(dlsym(library, "ncclProfiler_v5"));
  if (!table) {
    // NCCL would go on to v4 .. v1; the stand-in drives only the interface collbench implements.
    for (int v = 4; v >= 1; --v) {
      if (dlsym(library, fmt::format("ncclProfiler_v{}", v).c_str())) {
        nccl_log::info(nccl_log::kInit,
                       fmt::format("PROFILER/Plugin: {} exports ncclProfiler_v{}, which the GPU "
                                   "stand-in does not drive (it drives v5 only)",
                                   name ? name : "libnccl-profiler.so", v));
        break;
      }
    }
    if (name)
      nccl_log::info(nccl_log::kInit,
                     fmt::format("External profiler plugin {} is unsupported", name));
    dlclose(library);
    h.status = Status::kFailed;
    return;
  }
  nccl_log::info(nccl_log::kInit, fmt::format("PROFILER/Plugin: Loaded {} (v5)", table->name));
  if (name) {
    nccl_log::info(nccl_log::kInit,
                   fmt::format("Successfully loaded external profiler plugin {}", name));
  }
  h.library = library;
  h.table = table;
  h.references = 1;
  h.status = Status::kLoaded;
}

void unload(Host& h) {
  if (h.status != Status::kLoaded || --h.references > 0) return;
  nccl_log::info(nccl_log::kInit,
                 fmt::format("PROFILER/Plugin: Closing profiler plugin {}", h.table->name));
  dlclose(h.library);
  h.library = nullptr;
  h.table = nullptr;
  h.status = Status::kReady;
}

struct Context {
  void* plugin = nullptr;  ///< the plugin's own context
};

}  // namespace

void* start_communicator(const CommunicatorInfo& info) {
  Host& h = host();
  const std::lock_guard lock(h.mutex);
  load(h);
  if (h.status != Status::kLoaded) return nullptr;
  auto* context = new Context;
  int mask = 0;
  const int err =
      h.table->init(&context->plugin, info.comm_hash, &mask, info.name, info.nodes, info.nranks,
                    info.rank, reinterpret_cast<Logger>(&nccl_log::plugin_logger));
  if (err != 0) {
    nccl_log::info(
        nccl_log::kInit,
        fmt::format("Profiler init failed with error '{}'. Continue without profiler.", err));
  }
  h.mask.store(mask, std::memory_order_relaxed);
  return context;
}

void finish_communicator(void* context) {
  Host& h = host();
  const std::lock_guard lock(h.mutex);
  auto* c = static_cast<Context*>(context);
  if (c && h.table && c->plugin) h.table->finalize(c->plugin);
  delete c;
  if (c) unload(h);
}

bool wants_events() { return (host().mask.load(std::memory_order_relaxed) & (kColl | kP2p)) != 0; }

void launch_events(void* context, const Collective* collectives, std::size_t ncollectives,
                   const PointToPoint* p2p, std::size_t np2p) {
  Host& h = host();
  auto* c = static_cast<Context*>(context);
  const int mask = h.mask.load(std::memory_order_relaxed);
  if (!c || !h.table || !(mask & (kGroup | kColl | kP2p))) return;
  // NCCL starts the group event whenever any of its children is asked for.
  DescriptorV5 group{};
  group.type = kGroup;
  void* group_handle = nullptr;
  h.table->start_event(c->plugin, &group_handle, &group);
  std::vector<void*> handles;
  if (mask & kColl) {
    for (std::size_t i = 0; i < ncollectives; ++i) {
      const Collective& k = collectives[i];
      DescriptorV5 d{};
      d.type = kColl;
      d.parent_obj = nullptr;  // no CollApi event was asked for
      d.rank = k.rank;
      d.coll.seq_number = k.seq_number;
      d.coll.func = k.func;
      d.coll.send_buff = k.send;
      d.coll.recv_buff = k.recv;
      d.coll.count = k.count;
      d.coll.root = k.root;
      d.coll.datatype = k.datatype;
      d.coll.n_channels = static_cast<std::uint8_t>(k.channels);
      d.coll.n_warps = static_cast<std::uint8_t>(k.warps);
      d.coll.algo = k.algorithm;
      d.coll.proto = k.protocol;
      d.coll.parent_group = group_handle;
      void* handle = nullptr;
      h.table->start_event(c->plugin, &handle, &d);
      handles.push_back(handle);
    }
  }
  if (mask & kP2p) {
    for (std::size_t i = 0; i < np2p; ++i) {
      const PointToPoint& k = p2p[i];
      DescriptorV5 d{};
      d.type = kP2p;
      d.rank = k.rank;
      d.p2p.func = k.func;
      d.p2p.buff = k.buffer;
      d.p2p.datatype = k.datatype;
      d.p2p.count = k.count;
      d.p2p.peer = k.peer;
      d.p2p.n_channels = static_cast<std::uint8_t>(k.channels);
      d.p2p.parent_group = group_handle;
      void* handle = nullptr;
      h.table->start_event(c->plugin, &handle, &d);
      handles.push_back(handle);
    }
  }
  // A null handle means the plugin wants no stop call (collbench's returns none).
  for (void* handle : handles) {
    if (handle) h.table->stop_event(handle);
  }
  if (group_handle) h.table->stop_event(group_handle);
}

// NCCL writes its descriptor at these offsets (LP64): the published layout.
static_assert(offsetof(DescriptorV5, rank) == 16);
static_assert(offsetof(DescriptorV5, coll.seq_number) == 24);
static_assert(offsetof(DescriptorV5, coll.count) == 56);
static_assert(offsetof(DescriptorV5, coll.n_channels) == 80);
static_assert(offsetof(DescriptorV5, coll.algo) == 88);
static_assert(offsetof(DescriptorV5, coll.parent_group) == 104);
static_assert(sizeof(DescriptorV5) == 112);

}  // namespace collbench::stand_in::profiler
