#include "nccl_backend.h"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nccl.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "collbench/cuda_device.h"
#include "collbench/error.h"
#include "collbench/types.h"
#include "nccl_debug_capture.h"
#include "nccl_log.h"
#include "nccl_rules.h"
#include "nccl_types.h"

namespace collbench {
namespace {

using Clock = std::chrono::steady_clock;

/// NCCL entry points newer than the oldest NCCL collbench runs with, looked up at run time so that
/// the binary starts with any libnccl.so.2 and says what is missing only when it is asked for.
struct OptionalApi {
  ncclResult_t (*mem_alloc)(void**, size_t) = nullptr;                            // 2.19
  ncclResult_t (*mem_free)(void*) = nullptr;                                      // 2.19
  ncclResult_t (*comm_register)(const ncclComm_t, void*, size_t, void**) = nullptr;  // 2.19
  ncclResult_t (*comm_deregister)(const ncclComm_t, void*) = nullptr;             // 2.19
  ncclResult_t (*window_register)(ncclComm_t, void*, size_t, ncclWindow_t*, int) = nullptr;  // 2.27
  ncclResult_t (*window_deregister)(ncclComm_t, ncclWindow_t) = nullptr;          // 2.27

  static OptionalApi load() {
    OptionalApi api;
    lookup(api.mem_alloc, "ncclMemAlloc");
    lookup(api.mem_free, "ncclMemFree");
    lookup(api.comm_register, "ncclCommRegister");
    lookup(api.comm_deregister, "ncclCommDeregister");
    lookup(api.window_register, "ncclCommWindowRegister");
    lookup(api.window_deregister, "ncclCommWindowDeregister");
    return api;
  }

 private:
  template <typename F>
  static void lookup(F& function, const char* symbol) {
    function = reinterpret_cast<F>(dlsym(RTLD_DEFAULT, symbol));
  }
};

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::optional<std::string>(v) : std::nullopt;
}

/// Every rank learns whether any rank failed a local step, and all throw the first failure: an
/// error found on one rank only must not leave the others waiting in NCCL's initialisation.
void agree(Bootstrap& bootstrap, const std::optional<Error>& mine) {
  const std::string mine_text =
      mine ? fmt::format("{}|{}", static_cast<int>(mine->code()), mine->what()) : std::string();
  const auto all = bootstrap.allgather(mine_text);
  for (std::size_t r = 0; r < all.size(); ++r) {
    if (all[r].empty()) continue;
    const auto bar = all[r].find('|');
    const auto code = static_cast<ExitCode>(std::stoi(all[r].substr(0, bar)));
    std::string text = all[r].substr(bar + 1);
    // Each rank prints its own error line (usage errors: rank 0 only): name the rank it is about.
    if (static_cast<int>(r) != bootstrap.rank()) text = fmt::format("rank {}: {}", r, text);
    throw Error(code, text);
  }
}

class NcclBackend final : public Backend {
 public:
  NcclBackend(const Options& options, Bootstrap& bootstrap)
      : options_(options), bootstrap_(bootstrap), api_(OptionalApi::load()) {
    ncclGetVersion(&nccl_version_);  // does not log: safe before the capture is set up
    select_device();
    check_registration_support();
    capture_ = std::make_unique<nccl::DebugCapture>(bootstrap_.hostname());
    try {
      nranks_ = bootstrap_.size();
      rank_ = bootstrap_.rank();
      check_reachability();
      init_measurement_communicator();
      if (nranks_ > 1) establish_connections(comm_, "the measurement communicator");
      capture_->poll();
      capture_->restore_environment();
      describe_and_check_network();
    } catch (...) {
      // No destructor runs for a half-built object: release what NCCL holds here.
      abort_communicator();
      if (probe_buffer_) cudaFree(probe_buffer_);
      probe_buffer_ = nullptr;
      throw;
    }
    if (options_.register_buffers > 0) {
      // NCCL registers (and, for windows, maps symmetrically) only memory from its own allocator.
      device_->set_allocator(CudaAllocator{
          [this](std::size_t bytes) {
            void* p = nullptr;
            check(api_.mem_alloc(&p, bytes), "ncclMemAlloc");
            return p;
          },
          [this](void* p) { api_.mem_free(p); }});
    }
    device_->set_wait_poll([this] { poll_communicator(); });
  }

  ~NcclBackend() override {
    try {
      if (comm_ && !aborted_) {
        if (std::uncaught_exceptions() > 0) {
          abort_communicator();  // an error is unwinding: the peers may be gone, do not wait for them
        } else {
          finalize_communicator();
        }
      }
    } catch (...) {
      abort_communicator();
    }
    if (probe_buffer_) cudaFree(probe_buffer_);
  }

  const BackendInfo& info() const override { return info_; }
  Device& device() override { return *device_; }

  std::optional<std::string> unsupported(Primitive primitive, DType dtype, ReduceOp op) const override {
    return nccl::unsupported_reason(primitive, dtype, op, nccl_version_, device_->compute_capability());
  }

  void submit(const CollArgs& a) override {
    const ncclDataType_t type = nccl::to_nccl(a.dtype);
    const ncclRedOp_t op = nccl::to_nccl(a.op);
    cudaStream_t stream = device_->stream();
    switch (a.primitive) {
      case Primitive::kAllReduce:
        check(ncclAllReduce(a.send, a.recv, a.count, type, op, comm_, stream), "ncclAllReduce");
        break;
      case Primitive::kAllGather:
        check(ncclAllGather(a.send, a.recv, a.count, type, comm_, stream), "ncclAllGather");
        break;
      case Primitive::kReduceScatter:
        check(ncclReduceScatter(a.send, a.recv, a.count, type, op, comm_, stream), "ncclReduceScatter");
        break;
      case Primitive::kBroadcast:
        check(ncclBroadcast(a.send, a.recv, a.count, type, a.root, comm_, stream), "ncclBroadcast");
        break;
      case Primitive::kReduce:
        check(ncclReduce(a.send, a.recv, a.count, type, op, a.root, comm_, stream), "ncclReduce");
        break;
      case Primitive::kAllToAll: {
        // Block p of the send buffer goes to rank p; block p of the receive buffer comes from it.
        const std::size_t block = a.count * size_of(a.dtype);
        const auto* send = static_cast<const char*>(a.send);
        auto* recv = static_cast<char*>(a.recv);
        check(ncclGroupStart(), "ncclGroupStart");
        for (int peer = 0; peer < nranks_; ++peer) {
          check(ncclSend(send + peer * block, a.count, type, peer, comm_, stream), "ncclSend (alltoall)");
          check(ncclRecv(recv + peer * block, a.count, type, peer, comm_, stream), "ncclRecv (alltoall)");
        }
        check(ncclGroupEnd(), "ncclGroupEnd (alltoall)");
        break;
      }
      case Primitive::kSend:
        check(ncclSend(a.send, a.count, type, a.peer, comm_, stream), "ncclSend");
        break;
      case Primitive::kRecv:
        check(ncclRecv(a.recv, a.count, type, a.peer, comm_, stream), "ncclRecv");
        break;
    }
  }

  void group_begin() override { check(ncclGroupStart(), "ncclGroupStart"); }
  void group_end() override { check(ncclGroupEnd(), "ncclGroupEnd"); }

  void synchronize() override {
    device_->wait([this] { poll_communicator(); });
    // Forward what NCCL logged meanwhile (the user's NCCL_DEBUG output), a few times a second.
    const auto now = Clock::now();
    if (now - last_log_poll_ > std::chrono::milliseconds(250)) {
      capture_->poll();
      last_log_poll_ = now;
    }
  }

  void register_buffer(void* pointer, std::size_t bytes) override {
    if (options_.register_buffers <= 0 || !pointer) return;
    Registration r;
    if (options_.register_buffers >= 2) {
      // Collective: every rank registers its buffers in the same order (the runner does).
      check(api_.window_register(comm_, pointer, bytes, &r.window, NCCL_WIN_COLL_SYMMETRIC), "ncclCommWindowRegister");
    } else {
      check(api_.comm_register(comm_, pointer, bytes, &r.handle), "ncclCommRegister");
    }
    registrations_[pointer] = r;
  }

  void deregister_buffer(void* pointer) override {
    const auto it = registrations_.find(pointer);
    if (it == registrations_.end()) return;
    const Registration r = it->second;
    registrations_.erase(it);
    if (r.window) check(api_.window_deregister(comm_, r.window), "ncclCommWindowDeregister");
    if (r.handle) check(api_.comm_deregister(comm_, r.handle), "ncclCommDeregister");
  }

  void abort() noexcept override {
    // Called from the watchdog thread. NCCL calls stay on the main thread: it sees the request in
    // its polling loop, aborts the communicator and throws. Give it a moment to do so.
    abort_requested_ = true;
    for (int i = 0; i < 300 && !aborted_; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }

 private:
  struct Registration {
    void* handle = nullptr;
    ncclWindow_t window = nullptr;
  };

  // --- construction steps -------------------------------------------------------------------

  void select_device() {
    std::optional<Error> failure;
    try {
      const CudaProbe probe = probe_cuda();
      if (probe.device_count <= 0) {
        throw Error(ExitCode::kRuntime,
                    fmt::format("--backend nccl needs a GPU, but none is usable on {}: {}; use --backend mpi on "
                                "hosts without GPUs",
                                bootstrap_.hostname(), probe.error));
      }
      const char* env_device = std::getenv("COLLBENCH_DEVICE");
      const nccl::DeviceChoice choice =
          nccl::choose_device(options_.device, env_device, bootstrap_.local_rank(), bootstrap_.local_size(),
                              probe.device_count, bootstrap_.hostname());
      device_reason_ = choice.reason;
      device_ = make_cuda_device(choice.ordinal);
    } catch (const Error& e) {
      failure = e;
    }
    agree(bootstrap_, failure);

    // Two ranks on one GPU of one (NCCL) host: NCCL would fail deep in its initialisation.
    const std::string host_id = env("NCCL_HOSTID").value_or(bootstrap_.hostname());
    const auto all = bootstrap_.allgather(host_id + '\n' + device_->info().pci_bus_id);
    std::vector<nccl::RankDevice> devices;
    for (const auto& entry : all) {
      const auto nl = entry.find('\n');
      devices.push_back({entry.substr(0, nl), entry.substr(nl + 1)});
    }
    const auto multi = env("NCCL_MULTI_RANK_GPU_ENABLE");
    if (!(multi && *multi != "0")) {
      if (auto problem = nccl::duplicate_device(devices)) throw Error(ExitCode::kUsage, *problem);
    }
  }

  void check_registration_support() {
    const std::string have = nccl::version_string(nccl_version_);
    if (options_.register_buffers == 1 && !(api_.comm_register && api_.comm_deregister && api_.mem_alloc)) {
      throw_usage("-R 1: buffer registration (ncclCommRegister, ncclMemAlloc) needs NCCL 2.19 or newer; this is "
                  "NCCL {}; drop -R",
                  have);
    }
    if (options_.register_buffers >= 2 && !(api_.window_register && api_.window_deregister && api_.mem_alloc)) {
      throw_usage("-R 2: symmetric registration (ncclCommWindowRegister) needs NCCL 2.27 or newer; this is NCCL {}; "
                  "use -R 1 (ncclCommRegister) or drop -R",
                  have);
    }
  }

  std::optional<Clock::time_point> deadline() const {
    if (options_.timeout_s <= 0) return std::nullopt;
    return Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options_.timeout_s));
  }

  /// Rank 0 creates a unique id; the bootstrap (never NCCL) carries it to every rank.
  ncclUniqueId shared_unique_id() {
    std::string id(sizeof(ncclUniqueId), '\0');
    if (rank_ == 0) {
      ncclUniqueId unique{};
      const ncclResult_t r = ncclGetUniqueId(&unique);
      if (r != ncclSuccess) fail("ncclGetUniqueId", r);
      std::memcpy(id.data(), &unique, sizeof(unique));
    }
    bootstrap_.broadcast(id, 0);
    ncclUniqueId unique{};
    std::memcpy(&unique, id.data(), sizeof(unique));
    return unique;
  }

  /// Phase 1: a non-blocking communicator, initialised and connected under the --timeout
  /// deadline and aborted (ncclCommAbort) when it is missed or fails, proves that every rank is up
  /// and that NCCL's network connects them, before anything is measured.
  ///
  /// It is not the communicator that is measured: on a non-blocking communicator every NCCL call
  /// (each collective included) returns ncclInProgress and completes on a helper thread, which
  /// costs tens of microseconds per operation and would swamp small-message times.
  void check_reachability() {
    const ncclUniqueId unique = shared_unique_id();
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    const ncclResult_t r = ncclCommInitRankConfig(&init_comm_, nranks_, unique, rank_, &config);
    if (r != ncclSuccess && r != ncclInProgress) fail("ncclCommInitRankConfig (non-blocking)", r);
    wait_for(init_comm_, "NCCL communicator initialisation", deadline());
    if (nranks_ > 1) establish_connections(init_comm_, "the start-up communicator");
    const ncclResult_t f = ncclCommFinalize(init_comm_);
    if (f != ncclSuccess && f != ncclInProgress) fail("ncclCommFinalize (start-up communicator)", f);
    wait_for(init_comm_, "ncclCommFinalize (start-up communicator)", deadline());
    ncclCommDestroy(init_comm_);
    init_comm_ = nullptr;
  }

  /// Phase 2: the blocking communicator the measurements use. Its initialisation runs on a
  /// helper thread so that it, too, is bounded by --timeout (a peer that vanished since phase 1).
  void init_measurement_communicator() {
    const ncclUniqueId unique = shared_unique_id();
    struct Outcome {
      std::atomic<bool> done{false};
      ncclResult_t result = ncclSuccess;
      ncclComm_t comm = nullptr;
    };
    auto outcome = std::make_shared<Outcome>();
    const int ordinal = device_->ordinal(), nranks = nranks_, rank = rank_;
    std::thread worker([outcome, unique, ordinal, nranks, rank] {
      cudaSetDevice(ordinal);  // NCCL initialises on the calling thread's current device
      ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
      config.blocking = 1;
      ncclUniqueId id = unique;
      outcome->result = ncclCommInitRankConfig(&outcome->comm, nranks, id, rank, &config);
      outcome->done.store(true, std::memory_order_release);
    });
    const auto until = deadline();
    while (!outcome->done.load(std::memory_order_acquire)) {
      const bool late = until && Clock::now() > *until;
      if (late || abort_requested_) {
        // The thread is inside NCCL: leave it (it owns `outcome`); the process exits next.
        worker.detach();
        if (abort_requested_) {
          throw_runtime("NCCL communicator initialisation aborted on rank {} ({}) after the --timeout watchdog fired",
                        rank_, bootstrap_.hostname());
        }
        throw_runtime("NCCL communicator initialisation (measurement communicator) did not finish within --timeout "
                      "{} s on rank {} ({}){}",
                      options_.timeout_s, rank_, bootstrap_.hostname(), warning_suffix());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    worker.join();
    // A blocking initialisation that failed has released its communicator itself.
    if (outcome->result != ncclSuccess) fail("ncclCommInitRankConfig", outcome->result);
    comm_ = outcome->comm;
  }

  /// NCCL connects peers at their first operation: one tiny all-reduce makes the channels (and
  /// their "via NET/..." log lines) exist before the network is checked and anything is timed.
  void establish_connections(ncclComm_t comm, const char* which) {
    const auto until = deadline();
    if (!probe_buffer_) {
      if (cudaMalloc(&probe_buffer_, 16) != cudaSuccess) throw_runtime("cannot allocate 16 bytes on the GPU");
    }
    if (cudaMemsetAsync(probe_buffer_, 0, 16, device_->stream()) != cudaSuccess) {
      throw_runtime("cannot clear a GPU buffer");
    }
    const ncclResult_t r = ncclAllReduce(probe_buffer_, probe_buffer_, 1, ncclFloat32, ncclSum, comm, device_->stream());
    if (r == ncclInProgress) {
      wait_for(comm, "the first all-reduce (connection set-up)", until);
    } else if (r != ncclSuccess) {
      fail("ncclAllReduce (connection set-up)", r);
    }
    device_->wait([&] {
      poll(comm);
      if (until && Clock::now() > *until) {
        capture_->poll();
        abort_communicator();
        throw_runtime("the first all-reduce on {} (connection set-up) did not finish within --timeout {} s on rank "
                      "{} ({}): the ranks cannot reach each other over the network NCCL chose{}",
                      which, options_.timeout_s, rank_, bootstrap_.hostname(), warning_suffix());
      }
    });
  }

  void describe_and_check_network() {
    const nccl::LogFacts& facts = capture_->facts();
    const auto mine = nccl::summarize(facts, capture_->captured());
    std::vector<nccl::RankNetwork> ranks;
    for (const auto& entry : bootstrap_.allgather(nccl::encode(mine))) ranks.push_back(nccl::decode(entry));

    info_.name = "nccl";
    info_.library = "NCCL " + nccl::version_string(nccl_version_);
    info_.memory = MemoryKind::kDevice;
    info_.stream_ordered = true;
    info_.checks_network = true;
    info_.max_count = 0;
    info_.facts = nccl::network_facts(facts, ranks);
    info_.facts["library.nccl"] = nccl::version_string(nccl_version_);
    const std::string runtime = cuda_runtime_version(), driver = cuda_driver_version();
    if (!runtime.empty()) info_.facts["library.cuda_runtime"] = runtime;
    if (!driver.empty()) info_.facts["library.cuda_driver"] = driver;
    info_.facts["device_selection"] = device_reason_;
    info_.facts["nccl_log"] = capture_->captured()
                                  ? fmt::format("captured ({} lines at init)", facts.lines)
                                  : std::string("not captured (NCCL logging was set up before collbench's capture)");
    if (capture_->environment().superset) {
      info_.facts["nccl_log"] += "; NCCL_DEBUG_SUBSYS extended with INIT";
    }
    info_.facts["registration"] = options_.register_buffers >= 2   ? "ncclCommWindowRegister (symmetric)"
                                  : options_.register_buffers == 1 ? "ncclCommRegister"
                                                                   : "off";
    info_.facts["init"] = "non-blocking start-up communicator (bounded by --timeout), then a blocking one for measurement";

    if (!options_.require_net.empty()) {
      if (auto why = nccl::require_network(options_.require_net, ranks)) throw Error(ExitCode::kRuntime, *why);
    }
  }

  // --- waiting and errors ---------------------------------------------------------------------

  /// Polls a communicator until its pending call (a non-blocking initialisation, finalisation or
  /// group) has finished, honouring the deadline and abort requests.
  void wait_for(ncclComm_t comm, const char* what, std::optional<Clock::time_point> until) {
    for (unsigned spins = 0;; ++spins) {
      ncclResult_t state = ncclSuccess;
      const ncclResult_t r = ncclCommGetAsyncError(comm, &state);
      if (r != ncclSuccess) fail("ncclCommGetAsyncError", r);
      if (state == ncclSuccess) return;
      if (state != ncclInProgress) fail(what, state);
      if (abort_requested_) {
        abort_communicator();
        throw_runtime("{} aborted on rank {} ({}) after the --timeout watchdog fired", what, rank_,
                      bootstrap_.hostname());
      }
      if (until && Clock::now() > *until) {
        capture_->poll();
        abort_communicator();
        throw_runtime("{} did not finish within --timeout {} s on rank {} ({}): a rank that never started, or a "
                      "network NCCL cannot connect over, are the usual causes{}",
                      what, options_.timeout_s, rank_, bootstrap_.hostname(), warning_suffix());
      }
      if (spins > 64) std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }

  /// Called while waiting for the stream: turns an abort request or an asynchronous NCCL error
  /// into an exception (after aborting the communicator, so no kernel waits forever).
  void poll(ncclComm_t comm) {
    if (abort_requested_) {
      abort_communicator();
      throw_runtime("NCCL operations aborted on rank {} ({}) after the --timeout watchdog fired", rank_,
                    bootstrap_.hostname());
    }
    if (!comm) return;
    ncclResult_t state = ncclSuccess;
    if (ncclCommGetAsyncError(comm, &state) != ncclSuccess) return;
    if (state != ncclSuccess && state != ncclInProgress) fail("an NCCL operation (asynchronous error)", state);
  }
  void poll_communicator() { poll(comm_); }

  /// Accepts ncclSuccess; waits out ncclInProgress (non-blocking communicator); throws otherwise.
  void check(ncclResult_t r, const char* call) {
    if (r == ncclSuccess) return;
    if (r == ncclInProgress && comm_) {
      wait_for(comm_, call, std::nullopt);  // the watchdog bounds this wait
      return;
    }
    fail(call, r);
  }

  std::string warning_suffix() {
    if (!capture_) return "";
    capture_->poll();
    const auto warnings = capture_->recent_warnings(1);
    return warnings.empty() ? std::string() : fmt::format("; NCCL WARN: {}", warnings.back());
  }

  [[noreturn]] void fail(const char* call, ncclResult_t r) {
    std::string detail = ncclGetErrorString(r);
    const char* last = ncclGetLastError(comm_);
    if (last && *last) detail += fmt::format(" ({})", last);
    const std::string warning = warning_suffix();
    abort_communicator();
    throw_runtime("{} failed on rank {} ({}): {}{}{}", call, rank_, bootstrap_.hostname(), detail, warning,
                  capture_ && capture_->environment().level == "INFO" && !env("NCCL_DEBUG")
                      ? "; rerun with NCCL_DEBUG=INFO for NCCL's account"
                      : "");
  }

  void abort_communicator() noexcept {
    if (init_comm_) ncclCommAbort(init_comm_);
    if (comm_ && !aborted_) ncclCommAbort(comm_);
    init_comm_ = nullptr;
    comm_ = nullptr;
    aborted_ = true;
  }

  void finalize_communicator() {
    registrations_.clear();
    // Blocking communicator: ncclCommDestroy completes outstanding work and frees it.
    const ncclResult_t r = ncclCommDestroy(comm_);
    comm_ = nullptr;
    if (r != ncclSuccess) aborted_ = true;
  }

  const Options& options_;
  Bootstrap& bootstrap_;
  OptionalApi api_;
  int nccl_version_ = 0;
  int rank_ = 0;
  int nranks_ = 1;
  std::string device_reason_;
  std::unique_ptr<CudaDevice> device_;              // outlives the communicator (declared first)
  std::unique_ptr<nccl::DebugCapture> capture_;     // forwards NCCL's last lines at destruction
  ncclComm_t init_comm_ = nullptr;  // phase 1 only (non-blocking)
  ncclComm_t comm_ = nullptr;       // the measured, blocking communicator
  void* probe_buffer_ = nullptr;
  std::atomic<bool> abort_requested_{false};
  std::atomic<bool> aborted_{false};
  std::map<void*, Registration> registrations_;
  BackendInfo info_;
  Clock::time_point last_log_poll_ = Clock::now();
};

}  // namespace

bool nccl_usable() { return probe_cuda().device_count > 0; }

std::unique_ptr<Backend> make_nccl_backend(const Options& options, Bootstrap& bootstrap) {
  return std::make_unique<NcclBackend>(options, bootstrap);
}

}  // namespace collbench
