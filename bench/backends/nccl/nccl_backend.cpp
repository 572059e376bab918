#include "nccl_backend.h"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <fmt/format.h>
#include <nccl.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <thread>

#include "backends/catalog.h"
#include "collbench/cuda_check.h"
#include "collbench/cuda_device.h"
#include "collbench/error.h"
#include "collbench/types.h"
#include "nccl_debug_capture.h"
#include "nccl_log.h"
#include "nccl_process.h"
#include "nccl_profiler.h"
#include "nccl_ras_diagnosis.h"
#include "nccl_registration.h"
#include "nccl_rules.h"
#include "nccl_types.h"

namespace collbench {
namespace {

using Clock = std::chrono::steady_clock;

/// NCCL_VERSION(X, Y, Z) of NCCL 2.9 and later: the versions whose behaviour collbench checks.
constexpr int kNccl2_28 = 22800;  ///< ncclConfig_t::CTAPolicy
constexpr int kNccl2_30 = 23000;  ///< NCCL_MULTI_RANK_GPU_ENABLE

/// NCCL entry points newer than the oldest NCCL collbench runs with, looked up at run time so that
/// the binary starts with any libnccl.so.2 and says what is missing only when it is asked for.
/// Members are named after the functions so that NCCL_CHECK's message names the real call.
struct OptionalApi {
  ncclResult_t (*ncclMemAlloc)(void**, size_t) = nullptr;                               // 2.19
  ncclResult_t (*ncclMemFree)(void*) = nullptr;                                         // 2.19
  ncclResult_t (*ncclCommRegister)(const ncclComm_t, void*, size_t, void**) = nullptr;  // 2.19
  ncclResult_t (*ncclCommDeregister)(const ncclComm_t, void*) = nullptr;                // 2.19
  ncclResult_t (*ncclCommWindowRegister)(ncclComm_t, void*, size_t, ncclWindow_t*,
                                         int) = nullptr;                         // 2.27
  ncclResult_t (*ncclCommWindowDeregister)(ncclComm_t, ncclWindow_t) = nullptr;  // 2.27
  ncclResult_t (*ncclGather)(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t,
                             cudaStream_t) = nullptr;  // 2.28
  ncclResult_t (*ncclScatter)(const void*, void*, size_t, ncclDataType_t, int, ncclComm_t,
                              cudaStream_t) = nullptr;  // 2.28

  static OptionalApi load() {
    OptionalApi api;
    lookup(api.ncclMemAlloc, "ncclMemAlloc");
    lookup(api.ncclMemFree, "ncclMemFree");
    lookup(api.ncclCommRegister, "ncclCommRegister");
    lookup(api.ncclCommDeregister, "ncclCommDeregister");
    lookup(api.ncclCommWindowRegister, "ncclCommWindowRegister");
    lookup(api.ncclCommWindowDeregister, "ncclCommWindowDeregister");
    lookup(api.ncclGather, "ncclGather");
    lookup(api.ncclScatter, "ncclScatter");
    return api;
  }

 private:
  template <typename F>
  static void lookup(F& function, const char* symbol) {
    function = reinterpret_cast<F>(dlsym(RTLD_DEFAULT, symbol));
  }
};

using nccl::env;

/// Where an NCCL call is made: its text, file and line (NCCL_CHECK fills it in).
struct CallSite {
  const char* call;
  const char* file;
  int line;
  /// The function called: "ncclAllReduce" of "ncclAllReduce(a.send, ...)", "ncclMemAlloc" of
  /// "api_.ncclMemAlloc(&p, bytes)"; a description ("the first all-reduce (set-up)") as it is.
  std::string_view function() const {
    std::string_view text(call);
    const auto paren = text.find('(');
    if (paren == std::string_view::npos || paren == 0 || text[paren - 1] == ' ') return text;
    text = text.substr(0, paren);
    const auto dot = text.rfind('.');
    return dot == std::string_view::npos ? text : text.substr(dot + 1);
  }
};
#define NCCL_SITE(call) \
  CallSite { #call, __FILE__, __LINE__ }
/// The one way NCCL calls are checked: throws Error(kRuntime) naming the call, where it was made,
/// the rank, NCCL's message and its last warning (aborting the communicator first); waits out
/// ncclInProgress on a non-blocking communicator.
#define NCCL_CHECK(call) check((call), NCCL_SITE(call))

/// A rank's failure in a step every rank takes, sent to the others.
struct StepFailure {
  ExitCode code = ExitCode::kRuntime;
  std::string message;

  static constexpr auto fields() {
    return std::tuple{Field{"code", &StepFailure::code}, Field{"message", &StepFailure::message}};
  }
};

/// Every rank learns whether any rank failed a local step, and all throw the first failure: an
/// error found on one rank only must not leave the others waiting in NCCL's initialisation.
void agree(Bootstrap& bootstrap, const std::optional<Error>& mine) {
  std::optional<StepFailure> failure;
  if (mine) failure = StepFailure{mine->code(), mine->what()};
  const auto all = allgather(bootstrap, failure, "start-up outcome");
  for (std::size_t r = 0; r < all.size(); ++r) {
    if (!all[r]) continue;
    std::string text = all[r]->message;
    // Rank 0 prints the error line: name the rank it is about.
    if (static_cast<int>(r) != bootstrap.rank()) text = fmt::format("rank {}: {}", r, text);
    throw Error(all[r]->code, text, Reach::kEveryRank);
  }
}

class NcclBackend final : public Backend {
 public:
  NcclBackend(const Options& options, const BackendArgs& args, Bootstrap& bootstrap)
      : options_(options),
        register_mode_(static_cast<int>(args.integer(backend_option::kRegisterBuffers))),
        device_option_(static_cast<int>(args.integer(backend_option::kDevice))),
        require_net_(args.text(backend_option::kRequireNet)),
        stream_null_(args.integer(backend_option::kStreamNull) != 0),
        cta_policy_(static_cast<int>(args.integer(backend_option::kCtaPolicy))),
        bootstrap_(bootstrap),
        api_(OptionalApi::load()) {
    ncclGetVersion(&nccl_version_);  // does not log: safe before the capture is set up
    algorithms_ = nccl::choose_algorithms(args.integer(backend_option::kRecordAlgorithms) != 0,
                                          nccl_version_);
    check_stream_and_policy();
    select_device();
    check_registration_support();
    process_.emplace(bootstrap_, process_index(), options_.ranks_per_process() > 1,
                     algorithms_.source);
    capture_ = process_->capture();
    try {
      nranks_ = bootstrap_.size();
      rank_ = bootstrap_.rank();
      check_reachability();
      init_measurement_communicator();
      if (nranks_ > 1) establish_connections(comm_, "the measurement communicator");
      capture_->poll();
      process_->restore();
      describe_and_check_network();
      // The set-up calls are no row's.
      (void)capture_->take_tuning();
      (void)nccl::ProfilerRecorder::instance().take();
    } catch (...) {
      // No destructor runs for a half-built object: release what NCCL holds here.
      abort_communicator();
      if (probe_buffer_) cudaFree(probe_buffer_);
      probe_buffer_ = nullptr;
      throw;
    }
    if (register_mode_ > 0) {
      // NCCL registers (and, for windows, maps symmetrically) only memory from its own allocator.
      device_->set_allocator(CudaAllocator{[this](std::size_t bytes) {
                                             void* p = nullptr;
                                             NCCL_CHECK(api_.ncclMemAlloc(&p, bytes));
                                             return p;
                                           },
                                           [this](void* p) { api_.ncclMemFree(p); }});
    }
    device_->set_wait_poll([this] { poll_communicator(); });
  }

  ~NcclBackend() override {
    try {
      if (comm_ && !aborted_) {
        if (std::uncaught_exceptions() > 0) {
          abort_communicator();  // an error is unwinding: the peers may be gone, do not wait for
                                 // them
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

  std::optional<std::string> unsupported(Primitive primitive, DType dtype,
                                         ReduceOp op) const override {
    return nccl::unsupported_reason(primitive, dtype, op, nccl_version_,
                                    device_->compute_capability(), nranks_);
  }

  void submit(const CollArgs& a) override {
    const ncclDataType_t type = nccl::to_nccl(a.dtype);
    const ncclRedOp_t op = nccl::to_nccl(a.op);
    cudaStream_t stream = device_->stream();
    switch (a.primitive) {
      case Primitive::kAllReduce:
        NCCL_CHECK(ncclAllReduce(a.send, a.recv, a.count, type, op, comm_, stream));
        break;
      case Primitive::kAllGather:
        NCCL_CHECK(ncclAllGather(a.send, a.recv, a.count, type, comm_, stream));
        break;
      case Primitive::kReduceScatter:
        NCCL_CHECK(ncclReduceScatter(a.send, a.recv, a.count, type, op, comm_, stream));
        break;
      case Primitive::kBroadcast:
        NCCL_CHECK(ncclBroadcast(a.send, a.recv, a.count, type, a.root, comm_, stream));
        break;
      case Primitive::kReduce:
        NCCL_CHECK(ncclReduce(a.send, a.recv, a.count, type, op, a.root, comm_, stream));
        break;
      case Primitive::kAllToAll: {
        // Block p of the send buffer goes to rank p; block p of the receive buffer comes from it.
        const std::size_t block = a.count * size_of(a.dtype);
        const auto* send = static_cast<const char*>(a.send);
        auto* recv = static_cast<char*>(a.recv);
        NCCL_CHECK(ncclGroupStart());
        for (int peer = 0; peer < nranks_; ++peer) {
          NCCL_CHECK(ncclSend(send + peer * block, a.count, type, peer, comm_, stream));
          NCCL_CHECK(ncclRecv(recv + peer * block, a.count, type, peer, comm_, stream));
        }
        NCCL_CHECK(ncclGroupEnd());
        break;
      }
      case Primitive::kGather:
        if (api_.ncclGather) {
          NCCL_CHECK(api_.ncclGather(a.send, a.recv, a.count, type, a.root, comm_, stream));
        } else {
          rooted_exchange(a, type, stream);
        }
        break;
      case Primitive::kScatter:
        if (api_.ncclScatter) {
          NCCL_CHECK(api_.ncclScatter(a.send, a.recv, a.count, type, a.root, comm_, stream));
        } else {
          rooted_exchange(a, type, stream);
        }
        break;
      case Primitive::kSend:
        NCCL_CHECK(ncclSend(a.send, a.count, type, a.peer, comm_, stream));
        break;
      case Primitive::kRecv:
        NCCL_CHECK(ncclRecv(a.recv, a.count, type, a.peer, comm_, stream));
        break;
    }
  }

  void group_begin() override { NCCL_CHECK(ncclGroupStart()); }
  void group_end() override { NCCL_CHECK(ncclGroupEnd()); }

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
    if (register_mode_ <= 0 || !pointer) return;
    Registration r;
    if (register_mode_ >= 2) {
      // Collective: every rank registers its buffers in the same order (the runner does).
      NCCL_CHECK(
          api_.ncclCommWindowRegister(comm_, pointer, bytes, &r.window, NCCL_WIN_COLL_SYMMETRIC));
    } else {
      NCCL_CHECK(api_.ncclCommRegister(comm_, pointer, bytes, &r.handle));
    }
    registrations_[pointer] = r;
  }

  void deregister_buffer(void* pointer) override {
    const auto it = registrations_.find(pointer);
    if (it == registrations_.end()) return;
    const Registration r = it->second;
    registrations_.erase(it);
    if (r.window) NCCL_CHECK(api_.ncclCommWindowDeregister(comm_, r.window));
    if (r.handle) NCCL_CHECK(api_.ncclCommDeregister(comm_, r.handle));
  }

  /// --algorithms 1: the calls of the row's size that rank 0 of the communicator saw, from
  /// collbench's profiler plugin or NCCL's TUNING lines, both produced when a call is scheduled
  /// (so all are in once the calls completed).
  std::optional<RowAlgorithm> ran_with(std::string_view test, std::uint64_t bytes) override {
    switch (algorithms_.source) {
      case nccl::AlgorithmSource::kProfiler:
        return nccl::row_algorithm(nccl::ProfilerRecorder::instance().take(), test, bytes, nranks_,
                                   nccl::source_name(algorithms_.source));
      case nccl::AlgorithmSource::kTuningLog:
        if (!capture_) return std::nullopt;
        capture_->poll();
        return nccl::row_algorithm(capture_->take_tuning(), test, bytes, nranks_,
                                   nccl::source_name(algorithms_.source));
      case nccl::AlgorithmSource::kNone:
        break;
    }
    return std::nullopt;
  }

  /// What NCCL's RAS service says about who is behind (nccl_ras_diagnosis.h).
  std::optional<std::string> diagnose_hang() noexcept override {
    return nccl::ras_diagnosis(nccl_version_, [](const char* name) { return env(name); });
  }

  void abort() noexcept override {
    // Called from the watchdog thread. NCCL calls stay on the main thread: it sees the request in
    // its polling loop, aborts the communicator and throws. Give it a moment to do so (0.5 s on an
    // H200), but no more than a second: the job is torn down next in any case, and a main thread
    // stuck outside the loop (inside an enqueue call that waits for a stopped peer) never
    // answers, so every second here is a second later that every rank ends.
    abort_requested_ = true;
    for (int i = 0; i < 100 && !aborted_; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }

 private:
  struct Registration {
    void* handle = nullptr;
    ncclWindow_t window = nullptr;
  };

  /// Gather and scatter before NCCL 2.28 (which has ncclGather and ncclScatter), as nccl-tests
  /// builds them: grouped sends and receives between the root and every rank, itself included.
  /// In place, the root's own block is already where it belongs.
  void rooted_exchange(const CollArgs& a, ncclDataType_t type, cudaStream_t stream) {
    const bool gather = a.primitive == Primitive::kGather;
    const std::size_t block = a.count * size_of(a.dtype);
    const bool own_block_in_place = a.placement == Placement::kInPlace;
    NCCL_CHECK(ncclGroupStart());
    if (rank_ == a.root) {
      for (int peer = 0; peer < nranks_; ++peer) {
        if (peer == rank_ && own_block_in_place) continue;
        const std::size_t at = block * static_cast<std::size_t>(peer);
        if (gather) {
          NCCL_CHECK(ncclRecv(static_cast<char*>(a.recv) + at, a.count, type, peer, comm_, stream));
        } else {
          NCCL_CHECK(
              ncclSend(static_cast<const char*>(a.send) + at, a.count, type, peer, comm_, stream));
        }
      }
    }
    if (!(rank_ == a.root && own_block_in_place)) {
      if (gather) {
        NCCL_CHECK(ncclSend(a.send, a.count, type, a.root, comm_, stream));
      } else {
        NCCL_CHECK(ncclRecv(a.recv, a.count, type, a.root, comm_, stream));
      }
    }
    NCCL_CHECK(ncclGroupEnd());
  }

  // --- construction steps -------------------------------------------------------------------

  void select_device() {
    std::optional<Error> failure;
    try {
      const CudaProbe probe = probe_cuda();
      if (probe.device_count <= 0) {
        throw Error(
            ExitCode::kRuntime,
            fmt::format(
                "--backend nccl needs a GPU, but none is usable on {}: {}; use --backend mpi on "
                "hosts without GPUs",
                bootstrap_.hostname(), probe.error));
      }
      const nccl::DeviceChoice choice = nccl::choose_device(
          device_option_, std::getenv("COLLBENCH_DEVICE"), bootstrap_.local_rank(),
          bootstrap_.local_size(), probe.device_count, bootstrap_.hostname(),
          std::getenv("NCCL_TESTS_DEVICE"), process_index());
      device_reason_ = choice.reason;
      device_ = make_cuda_device(choice.ordinal, stream_null_);
    } catch (const Error& e) {
      failure = e;
    }
    agree(bootstrap_, failure);

    // Two ranks on one GPU of one (NCCL) host: NCCL would fail deep in its initialisation.
    const nccl::RankDevice mine{env("NCCL_HOSTID").value_or(bootstrap_.hostname()),
                                device_->info().pci_bus_id};
    const auto devices = allgather(bootstrap_, mine, "GPU of every rank");
    // NCCL 2.30 lets ranks share a GPU when asked; older NCCL ignores the variable and fails.
    const auto multi = env("NCCL_MULTI_RANK_GPU_ENABLE");
    if (!(multi && *multi != "0" && nccl_version_ >= kNccl2_30)) {
      if (auto problem = nccl::duplicate_device(devices)) throw Error(ExitCode::kUsage, *problem);
    }
  }

  /// -y and -x, refused where they cannot take effect rather than silently ignored.
  void check_stream_and_policy() {
    if (stream_null_ && options_.graph_launches > 0) {
      throw_usage(
          "-y 1 (the null stream) cannot be captured as a CUDA graph (-G {}); drop -y or -G",
          options_.graph_launches);
    }
    if (cta_policy_ >= 0 && nccl_version_ < kNccl2_28) {
      throw_usage(
          "-x {}: the CTA policy (ncclConfig_t::CTAPolicy) needs NCCL 2.28 or newer; this "
          "is NCCL {}; drop -x",
          cta_policy_, nccl::version_string(nccl_version_));
    }
  }

  void check_registration_support() {
    const std::string have = nccl::version_string(nccl_version_);
    if (register_mode_ == 1 &&
        !(api_.ncclCommRegister && api_.ncclCommDeregister && api_.ncclMemAlloc)) {
      throw_usage(
          "-R 1: buffer registration (ncclCommRegister, ncclMemAlloc) needs NCCL 2.19 or newer; "
          "this is "
          "NCCL {}; drop -R",
          have);
    }
    if (register_mode_ >= 2 &&
        !(api_.ncclCommWindowRegister && api_.ncclCommWindowDeregister && api_.ncclMemAlloc)) {
      throw_usage(
          "-R 2: symmetric registration (ncclCommWindowRegister) needs NCCL 2.27 or newer; this is "
          "NCCL {}; "
          "use -R 1 (ncclCommRegister) or drop -R",
          have);
    }
  }

  std::optional<Clock::time_point> deadline() const {
    if (options_.timeout_s <= 0) return std::nullopt;
    return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(options_.timeout_s));
  }

  /// Rank 0 creates a unique id; the bootstrap (never NCCL) carries it to every rank.
  ncclUniqueId shared_unique_id() {
    // The id is an opaque byte array (NCCL_UNIQUE_ID_BYTES); it travels as a vector of bytes.
    std::vector<std::uint8_t> bytes(sizeof(ncclUniqueId));
    if (rank_ == 0) {
      ncclUniqueId unique{};
      NCCL_CHECK(ncclGetUniqueId(&unique));
      std::memcpy(bytes.data(), &unique, sizeof(unique));
    }
    bytes = broadcast(bootstrap_, bytes, 0, "NCCL unique id");
    if (bytes.size() != sizeof(ncclUniqueId)) {
      throw_runtime(
          "NCCL unique id: rank 0 sent {} bytes, this NCCL expects {}; every rank must "
          "load the same NCCL",
          bytes.size(), sizeof(ncclUniqueId));
    }
    ncclUniqueId unique{};
    std::memcpy(&unique, bytes.data(), sizeof(unique));
    return unique;
  }

  /// This rank's place among the ranks of its process (-t, -g); 0 when it is the only one.
  int process_index() const { return bootstrap_.local_rank() % options_.ranks_per_process(); }

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
    if (cta_policy_ >= 0) config.CTAPolicy = cta_policy_;
    started(ncclCommInitRankConfig(&init_comm_, nranks_, unique, rank_, &config),
            NCCL_SITE(ncclCommInitRankConfig));
    wait_for(init_comm_, "NCCL communicator initialisation", deadline());
    if (nranks_ > 1) establish_connections(init_comm_, "the start-up communicator");
    started(ncclCommFinalize(init_comm_), NCCL_SITE(ncclCommFinalize));
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
      cudaError_t device = cudaSuccess;
      ncclResult_t result = ncclSuccess;
      ncclComm_t comm = nullptr;
    };
    auto outcome = std::make_shared<Outcome>();
    const int ordinal = device_->ordinal(), nranks = nranks_, rank = rank_,
              cta_policy = cta_policy_;
    std::thread worker([outcome, unique, ordinal, nranks, rank, cta_policy] {
      // NCCL initialises on the calling thread's current device.
      outcome->device = cudaSetDevice(ordinal);
      if (outcome->device != cudaSuccess) {
        outcome->done.store(true, std::memory_order_release);
        return;
      }
      ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
      config.blocking = 1;
      if (cta_policy >= 0) config.CTAPolicy = cta_policy;
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
          throw_runtime(
              "NCCL communicator initialisation aborted on rank {} ({}) after the --timeout "
              "watchdog fired",
              rank_, bootstrap_.hostname());
        }
        throw_runtime(
            "NCCL communicator initialisation (measurement communicator) did not finish within "
            "--timeout "
            "{} s on rank {} ({}){}",
            options_.timeout_s, rank_, bootstrap_.hostname(), warning_suffix());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    worker.join();
    if (outcome->device != cudaSuccess) {
      cuda_fail(outcome->device, "cudaSetDevice(ordinal)", __FILE__, __LINE__);
    }
    // A blocking initialisation that failed has released its communicator itself.
    if (outcome->result != ncclSuccess) {
      fail(CallSite{"ncclCommInitRankConfig", __FILE__, __LINE__}, outcome->result);
    }
    comm_ = outcome->comm;
  }

  /// NCCL connects peers at their first operation: one tiny all-reduce makes the channels (and
  /// their "via NET/..." log lines) exist before the network is checked and anything is timed.
  void establish_connections(ncclComm_t comm, const char* which) {
    const auto until = deadline();
    if (!probe_buffer_) CUDA_CHECK(cudaMalloc(&probe_buffer_, 16));
    CUDA_CHECK(cudaMemsetAsync(probe_buffer_, 0, 16, device_->stream()));
    const ncclResult_t r = ncclAllReduce(probe_buffer_, probe_buffer_, 1, ncclFloat32, ncclSum,
                                         comm, device_->stream());
    started(r, NCCL_SITE(ncclAllReduce));
    if (r == ncclInProgress) wait_for(comm, "the first all-reduce (connection set-up)", until);
    device_->wait([&] {
      poll(comm);
      if (until && Clock::now() > *until) {
        capture_->poll();
        abort_communicator();
        throw_runtime(
            "the first all-reduce on {} (connection set-up) did not finish within --timeout {} s "
            "on rank "
            "{} ({}): the ranks cannot reach each other over the network NCCL chose{}",
            which, options_.timeout_s, rank_, bootstrap_.hostname(), warning_suffix());
      }
    });
  }

  void describe_and_check_network() {
    const nccl::LogFacts& facts = capture_->facts();
    const auto mine = nccl::summarize(facts, capture_->captured());
    const auto ranks = allgather(bootstrap_, mine, "NCCL network of every rank");

    info_.name = nccl_backend_descriptor().name;
    info_.library = "NCCL " + nccl::version_string(nccl_version_);
    info_.memory = MemoryKind::kDevice;
    info_.stream_ordered = true;
    info_.max_count = 0;
    nccl::NetworkFacts network = nccl::network_facts(facts, ranks);
    info_.network = std::move(network.network);
    if (!network.nccl_build.empty()) info_.libraries["nccl_build"] = network.nccl_build;
    info_.libraries["nccl"] = nccl::version_string(nccl_version_);
    const std::string runtime = cuda_runtime_version(), driver = cuda_driver_version();
    if (!runtime.empty()) info_.libraries["cuda_runtime"] = runtime;
    if (!driver.empty()) info_.libraries["cuda_driver"] = driver;
    info_.facts["device_selection"] = device_reason_;
    info_.facts["nccl_log"] =
        capture_->captured()
            ? fmt::format("captured ({} lines at init)", facts.lines)
            : std::string("not captured (NCCL logging was set up before collbench's capture)");
    if (capture_->environment().superset) {
      info_.facts["nccl_log"] += "; NCCL_DEBUG_SUBSYS extended with INIT";
    }
    // What NCCL did with -R, not only what was asked: it falls back to local registration
    // quietly where symmetric windows are unsupported (several nodes, no P2P).
    info_.facts["registration"] = nccl::registration_outcome(register_mode_, facts).sentence;
    if (stream_null_) info_.facts["stream"] = "the legacy default (null) stream (-y 1)";
    if (auto algorithms = nccl::algorithms_fact(algorithms_)) {
      info_.facts["algorithms"] = *algorithms;
    }
    // NCCL counts nodes by host hash: NCCL_HOSTID makes several nodes of one machine.
    if (facts.nnodes > 0) info_.nodes = facts.nnodes;
    info_.settings = capture_->settings().settings();
    info_.facts["init"] =
        "non-blocking start-up communicator (bounded by --timeout), then a blocking one for "
        "measurement";

    if (!require_net_.empty()) {
      if (auto why = nccl::require_network(require_net_, ranks)) {
        throw Error(ExitCode::kRuntime, *why);
      }
    }
  }

  // --- waiting and errors ---------------------------------------------------------------------

  /// Polls a communicator until its pending call (a non-blocking initialisation, finalisation or
  /// group) has finished, honouring the deadline and abort requests.
  void wait_for(ncclComm_t comm, const char* what, std::optional<Clock::time_point> until) {
    for (unsigned spins = 0;; ++spins) {
      ncclResult_t state = ncclSuccess;
      NCCL_CHECK(ncclCommGetAsyncError(comm, &state));
      if (state == ncclSuccess) return;
      if (state != ncclInProgress) fail(CallSite{what, __FILE__, __LINE__}, state);
      if (abort_requested_) {
        abort_communicator();
        throw_runtime("{} aborted on rank {} ({}) after the --timeout watchdog fired", what, rank_,
                      bootstrap_.hostname());
      }
      if (until && Clock::now() > *until) {
        capture_->poll();
        abort_communicator();
        throw_runtime(
            "{} did not finish within --timeout {} s on rank {} ({}): a rank that never started, "
            "or a "
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
      throw_runtime("NCCL operations aborted on rank {} ({}) after the --timeout watchdog fired",
                    rank_, bootstrap_.hostname());
    }
    if (!comm) return;
    ncclResult_t state = ncclSuccess;
    if (ncclCommGetAsyncError(comm, &state) != ncclSuccess) return;
    if (state != ncclSuccess && state != ncclInProgress) {
      fail(CallSite{"an NCCL operation (asynchronous error)", __FILE__, __LINE__}, state);
    }
  }
  void poll_communicator() { poll(comm_); }

  /// NCCL_CHECK: accepts ncclSuccess; waits out ncclInProgress (non-blocking communicator);
  /// throws otherwise.
  void check(ncclResult_t r, const CallSite& site) {
    if (r == ncclSuccess) return;
    if (r == ncclInProgress && comm_) {
      wait_for(comm_, site.call, std::nullopt);  // the watchdog bounds this wait
      return;
    }
    fail(site, r);
  }

  /// A call on a non-blocking communicator: ncclInProgress means it started; the caller waits.
  void started(ncclResult_t r, const CallSite& site) {
    if (r != ncclSuccess && r != ncclInProgress) fail(site, r);
  }

  std::string warning_suffix() {
    if (!capture_) return "";
    capture_->poll();
    const auto warnings = capture_->recent_warnings(1);
    return warnings.empty() ? std::string() : fmt::format("; NCCL WARN: {}", warnings.back());
  }

  [[noreturn]] void fail(const CallSite& site, ncclResult_t r) {
    std::string detail = ncclGetErrorString(r);
    const char* last = ncclGetLastError(comm_);
    if (last && *last) detail += fmt::format(" ({})", last);
    const std::string warning = warning_suffix();
    abort_communicator();
    throw_runtime("{} failed on rank {} ({}) at {}:{}: {}{}{}", site.function(), rank_,
                  bootstrap_.hostname(), site.file, site.line, detail, warning,
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
  const int register_mode_;  ///< -R: 0 off, 1 ncclCommRegister, 2 symmetric windows
  const int device_option_;  ///< --device (-1: COLLBENCH_DEVICE or the local rank)
  const std::string require_net_;
  const bool stream_null_;  ///< -y 1: CUDA's legacy default stream
  /// --algorithms 1 (or the user's NCCL_DEBUG_SUBSYS logs TUNING): rows record NCCL's choice.
  nccl::AlgorithmSourceChoice algorithms_;
  const int cta_policy_;  ///< -x: ncclConfig_t::CTAPolicy, -1 to leave it unset
  Bootstrap& bootstrap_;
  OptionalApi api_;
  int nccl_version_ = 0;
  int rank_ = 0;
  int nranks_ = 1;
  std::string device_reason_;
  std::unique_ptr<CudaDevice> device_;  // outlives the communicator (declared first)
  /// NCCL's log and profiler settings, shared by the ranks of the process (nccl_process.h).
  std::optional<nccl::ProcessSettings> process_;
  /// Shared by the ranks of the process; forwards NCCL's last lines when the last one goes.
  std::shared_ptr<nccl::DebugCapture> capture_;
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

std::unique_ptr<Backend> make_nccl_backend(const Options& options, const BackendArgs& args,
                                           Bootstrap& bootstrap) {
  return std::make_unique<NcclBackend>(options, args, bootstrap);
}

}  // namespace collbench
