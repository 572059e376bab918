#include "ofi_backend.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <thread>
#include <vector>

#include "backends/catalog.h"
#include "collbench/host_device.h"
#include "ofi_check.h"
#include "ofi_idle.h"
#include "ofi_select.h"

namespace collbench {
namespace {

/// Tags carry the sender's rank in the low bits and a per-direction sequence number above them,
/// so every message matches exactly one receive without FI_DIRECTED_RECV (which not every
/// provider offers) and without relying on message ordering. The rank takes as few bits as the
/// job needs and the sequence wraps within the tag bits the provider matches (mem_tag_format,
/// 48 on some providers): bits above them are ignored, so an unmasked sequence would make two
/// messages match alike after 2^24 of them.
///
/// The fewest sequence bits accepted: the sequence must not wrap while a message of the same peer
/// is still unmatched (a window of split messages, peers a few iterations apart).
constexpr int kMinSequenceBits = 24;

std::string address_format_name(std::uint32_t format) {
  switch (format) {
    case FI_SOCKADDR_IN:
      return "ipv4";
    case FI_SOCKADDR_IN6:
      return "ipv6";
    case FI_SOCKADDR_IB:
      return "ib";
    case FI_ADDR_PSMX2:
      return "psmx2";
    case FI_ADDR_EFA:
      return "efa";
    case FI_ADDR_STR:
      return "str";
    default:
      return fmt::format("format {}", format);
  }
}

ofi::Candidate describe(const fi_info& info) {
  ofi::Candidate c;
  c.provider = info.fabric_attr && info.fabric_attr->prov_name ? info.fabric_attr->prov_name : "?";
  c.fabric = info.fabric_attr && info.fabric_attr->name ? info.fabric_attr->name : "?";
  c.domain = info.domain_attr && info.domain_attr->name ? info.domain_attr->name : "?";
  c.address_format = address_format_name(info.addr_format);
  // Only socket address formats hold a sockaddr; an EFA or string address would be misread.
  const bool socket_address = info.addr_format == FI_SOCKADDR ||
                              info.addr_format == FI_SOCKADDR_IN ||
                              info.addr_format == FI_SOCKADDR_IN6;
  const auto* sa = socket_address ? static_cast<const sockaddr*>(info.src_addr) : nullptr;
  if (sa && info.src_addrlen >= sizeof(sockaddr_in) && sa->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(sa);
    c.loopback = (ntohl(in->sin_addr.s_addr) >> 24) == 127;
  } else if (sa && info.src_addrlen >= sizeof(sockaddr_in6) && sa->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(sa);
    c.loopback = IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
    c.link_local = IN6_IS_ADDR_LINKLOCAL(&in6->sin6_addr);
  }
  if (c.domain == "lo") c.loopback = true;
  return c;
}

/// Rank 0's choice of provider, sent to every rank: the candidate, or why there is none.
struct ProviderChoice {
  std::optional<ofi::Candidate> chosen;
  std::string why_none;

  static constexpr auto fields() {
    return std::tuple{Field{"chosen", &ProviderChoice::chosen},
                      Field{"why_none", &ProviderChoice::why_none}};
  }
};

/// What a rank's endpoint accepts; every rank uses the smallest of all.
struct EndpointLimits {
  std::uint64_t max_message = 0;
  int tag_bits = 64;

  static constexpr auto fields() {
    return std::tuple{Field{"max_message", &EndpointLimits::max_message},
                      Field{"tag_bits", &EndpointLimits::tag_bits}};
  }
};

/// Closes a libfabric object when it goes out of scope.
template <typename T>
struct Closer {
  void operator()(T* object) const noexcept {
    if (object) fi_close(&object->fid);
  }
};
template <typename T>
using Handle = std::unique_ptr<T, Closer<T>>;

struct InfoDeleter {
  void operator()(fi_info* info) const noexcept { fi_freeinfo(info); }
};
using InfoList = std::unique_ptr<fi_info, InfoDeleter>;

/// A registered buffer (providers with FI_MR_LOCAL need a descriptor for every buffer).
struct Registration {
  std::size_t bytes = 0;
  Handle<fid_mr> mr;
};

class OfiBackend final : public Backend {
 public:
  OfiBackend(const BackendArgs& args, Bootstrap& bootstrap)
      : rank_(bootstrap.rank()),
        size_(bootstrap.size()),
        device_(make_host_device(bootstrap.local_size())),
        send_seq_(static_cast<std::size_t>(size_), 0),
        recv_seq_(static_cast<std::size_t>(size_), 0) {
    while (rank_bits_ < 63 && (std::uint64_t{1} << rank_bits_) < static_cast<std::uint64_t>(size_))
      ++rank_bits_;
    open(args, bootstrap);
    connect(bootstrap);
  }

  ~OfiBackend() override {
    // Registrations and the endpoint go before the domain and fabric they belong to.
    registrations_.clear();
    endpoint_.reset();
    av_.reset();
    cq_.reset();
    domain_.reset();
    fabric_.reset();
  }

  const BackendInfo& info() const override { return info_; }
  Device& device() override { return *device_; }

  std::optional<std::string> unsupported(Primitive p, DType, ReduceOp) const override {
    if (p == Primitive::kSend || p == Primitive::kRecv || p == Primitive::kAllToAll ||
        p == Primitive::kGather || p == Primitive::kScatter)
      return std::nullopt;
    return fmt::format(
        "libfabric moves messages point to point and collbench runs no {} algorithm "
        "over it (the ofi backend runs latency, bw, bibw, sendrecv, alltoall, gather and "
        "scatter; "
        "use --backend mpi or nccl)",
        name(p));
  }

  void submit(const CollArgs& a) override {
    const std::size_t bytes = a.count * size_of(a.dtype);
    switch (a.primitive) {
      case Primitive::kSend:
        queue_send(a.send, bytes, a.peer);
        break;
      case Primitive::kRecv:
        queue_recv(a.recv, bytes, a.peer);
        break;
      case Primitive::kAllToAll: {
        // Every pair at once: a receive from and a send to each peer (flush() posts them in turn,
        // in this order, so that both ends of a pair agree); the own block is a copy.
        const char* send = static_cast<const char*>(a.send);
        char* recv = static_cast<char*>(a.recv);
        for (int step = 1; step < size_; ++step) {
          const int peer = (rank_ + size_ - step) % size_;
          queue_recv(recv + bytes * static_cast<std::size_t>(peer), bytes, peer);
        }
        for (int step = 1; step < size_; ++step) {
          const int peer = (rank_ + step) % size_;
          queue_send(send + bytes * static_cast<std::size_t>(peer), bytes, peer);
        }
        std::memcpy(recv + bytes * static_cast<std::size_t>(rank_),
                    send + bytes * static_cast<std::size_t>(rank_), bytes);
        break;
      }
      case Primitive::kGather:
      case Primitive::kScatter: {
        // The root exchanges one block with every other rank; its own block is a copy (none in
        // place, where it already sits at its slot).
        const bool gather = a.primitive == Primitive::kGather;
        const char* send = static_cast<const char*>(a.send);
        char* recv = static_cast<char*>(a.recv);
        if (rank_ != a.root) {
          if (gather)
            queue_send(send, bytes, a.root);
          else
            queue_recv(recv, bytes, a.root);
          break;
        }
        for (int peer = 0; peer < size_; ++peer) {
          if (peer == rank_) continue;
          const std::size_t at = bytes * static_cast<std::size_t>(peer);
          if (gather)
            queue_recv(recv + at, bytes, peer);
          else
            queue_send(send + at, bytes, peer);
        }
        const std::size_t own = bytes * static_cast<std::size_t>(rank_);
        if (a.placement != Placement::kInPlace) {
          if (gather)
            std::memcpy(recv + own, send, bytes);
          else
            std::memcpy(recv, send + own, bytes);
        }
        break;
      }
      default:
        throw_runtime("the ofi backend cannot run {}", name(a.primitive));
    }
    if (!in_group_) wait_all();
  }

  void group_begin() override { in_group_ = true; }
  void group_end() override {
    in_group_ = false;
    wait_all();
  }
  void synchronize() override { wait_all(); }

  void register_buffer(void* pointer, std::size_t bytes) override {
    if (!register_) return;
    fid_mr* mr = nullptr;
    OFI_CHECK(fi_mr_reg(domain_.get(), pointer, bytes, FI_SEND | FI_RECV, 0, next_key_++, 0, &mr,
                        nullptr));
    Registration r{bytes, Handle<fid_mr>(mr)};
    if (mr_mode_ & FI_MR_ENDPOINT) {
      OFI_CHECK(fi_mr_bind(mr, &endpoint_->fid, 0));
      OFI_CHECK(fi_mr_enable(mr));
    }
    registrations_.emplace(static_cast<const char*>(pointer), std::move(r));
  }

  void deregister_buffer(void* pointer) override {
    registrations_.erase(static_cast<const char*>(pointer));
  }

 private:
  /// One piece of a message (at most max_message_ bytes), queued until flush() posts it.
  struct Piece {
    char* data;
    std::size_t bytes;
    int peer;
    std::uint64_t tag;
  };

  // The provider, its endpoint and what the run states about them.
  void open(const BackendArgs& args, Bootstrap& bootstrap) {
    fi_info* hints = fi_allocinfo();
    if (!hints) throw_runtime("fi_allocinfo: out of memory");
    InfoList hints_owner(hints);
    // Reliable datagrams with tagged messages: what EFA, verbs (through rxm), tcp and shm offer.
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_TAGGED;
    // What this backend can live with: it passes fi_context2 as every context, and registers
    // (and binds) buffers when the provider asks for local registration.
    hints->mode = FI_CONTEXT | FI_CONTEXT2;
    hints->domain_attr->mr_mode =
        FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY | FI_MR_ENDPOINT;
    hints->domain_attr->threading = FI_THREAD_DOMAIN;

    // The API version this build was compiled for, or the library's if that is older.
    const std::uint32_t version =
        std::min<std::uint32_t>(FI_VERSION(FI_MAJOR_VERSION, FI_MINOR_VERSION), fi_version());
    fi_info* list = nullptr;
    const int rc = fi_getinfo(version, nullptr, nullptr, 0, hints, &list);
    InfoList list_owner(list);
    std::vector<ofi::Candidate> candidates;
    std::vector<fi_info*> entries;
    if (rc == 0) {
      for (fi_info* i = list; i; i = i->next) {
        candidates.push_back(describe(*i));
        entries.push_back(i);
      }
    }
    const std::size_t mine = choose_provider(args, bootstrap, candidates, rc);
    fi_info* info = entries[mine];
    const ofi::Candidate& local = candidates[mine];
    open_endpoint(*info);
    const int tag_bits = agree_on_limits(*info, local, bootstrap);
    register_ = (mr_mode_ & FI_MR_LOCAL) != 0 || args.integer(backend_option::kRegisterBuffers) > 0;
    idle_ = ofi::idle_polling(std::getenv("OMPI_MCA_mpi_yield_when_idle"), bootstrap.local_size(),
                              std::thread::hardware_concurrency());
    describe_run(*info, local, tag_bits, bootstrap);
  }

  // Rank 0 chooses the provider from what its host offers (`rc`: fi_getinfo's answer); every rank
  // then takes the entry of its own list that matches it (and --require-net). Returns that
  // entry's index.
  std::size_t choose_provider(const BackendArgs& args, Bootstrap& bootstrap,
                              const std::vector<ofi::Candidate>& candidates, int rc) {
    const bool multi_host = bootstrap.node_count() > 1;
    ProviderChoice choice;
    if (rank_ == 0) {
      const auto pick = ofi::choose(candidates, multi_host);
      if (pick) {
        choice.chosen = candidates[*pick];
      } else {
        choice.why_none = fmt::format(
            "libfabric offers no {}reliable-datagram endpoint with tagged messages on {} ({}){}; "
            "`fi_info -t FI_EP_RDM -c FI_TAGGED` lists what the host has, FI_PROVIDER selects one",
            multi_host ? "multi-host " : "", bootstrap.hostname(),
            rc == 0 ? "found: " + ofi::describe(candidates)
                    : std::string("fi_getinfo: ") + fi_strerror(-rc),
            std::getenv("FI_PROVIDER")
                ? fmt::format(" with FI_PROVIDER={}", std::getenv("FI_PROVIDER"))
                : "");
      }
    }
    choice = broadcast(bootstrap, choice, 0, "libfabric provider");
    if (!choice.chosen) throw Error(ExitCode::kRuntime, choice.why_none);
    const ofi::Candidate& chosen = *choice.chosen;
    const std::string& require_net = args.text(backend_option::kRequireNet);
    if (!require_net.empty()) {
      if (auto why = ofi::require_provider(require_net, chosen)) {
        throw Error(ExitCode::kRuntime, *why);
      }
    }
    const auto mine =
        ofi::match(candidates, chosen, multi_host, bootstrap.local_rank(), bootstrap.local_size());
    if (!mine) {
      throw_runtime(
          "libfabric on {} offers no {} endpoint over {} addresses, which rank 0 chose (found: "
          "{}); "
          "install the same provider on every host or set FI_PROVIDER to one they share",
          bootstrap.hostname(), chosen.provider, chosen.address_format, ofi::describe(candidates));
    }
    return *mine;
  }

  // The fabric, domain, completion queue, address vector and endpoint of `info`, enabled.
  void open_endpoint(fi_info& info) {
    fid_fabric* fabric = nullptr;
    OFI_CHECK(fi_fabric(info.fabric_attr, &fabric, nullptr));
    fabric_.reset(fabric);
    fid_domain* domain = nullptr;
    OFI_CHECK(fi_domain(fabric, &info, &domain, nullptr));
    domain_.reset(domain);

    fi_cq_attr cq_attr{};
    cq_attr.format = FI_CQ_FORMAT_CONTEXT;
    cq_attr.wait_obj = FI_WAIT_NONE;  // busy polling, as a latency benchmark must
    fid_cq* cq = nullptr;
    OFI_CHECK(fi_cq_open(domain, &cq_attr, &cq, nullptr));
    cq_.reset(cq);
    fi_av_attr av_attr{};
    av_attr.type = FI_AV_TABLE;
    av_attr.count = static_cast<std::size_t>(size_);
    fid_av* av = nullptr;
    OFI_CHECK(fi_av_open(domain, &av_attr, &av, nullptr));
    av_.reset(av);
    fid_ep* ep = nullptr;
    OFI_CHECK(fi_endpoint(domain, &info, &ep, nullptr));
    endpoint_.reset(ep);
    OFI_CHECK(fi_ep_bind(ep, &av->fid, 0));
    OFI_CHECK(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
    OFI_CHECK(fi_enable(ep));
    mr_mode_ = info.domain_attr->mr_mode;
  }

  // The message size, tag bits and queue depth every rank keeps to: the provider's, the smallest
  // of all ranks' where both sides must agree. Returns the tag bits.
  int agree_on_limits(const fi_info& info, const ofi::Candidate& local, Bootstrap& bootstrap) {
    max_message_ = info.ep_attr->max_msg_size ? info.ep_attr->max_msg_size : SIZE_MAX;
    if (const char* limit = std::getenv("COLLBENCH_OFI_MAX_MESSAGE")) {
      // Splitting below the provider's limit shows what message size the fabric needs.
      char* end = nullptr;
      const unsigned long long value = std::strtoull(limit, &end, 10);
      if (end == limit || *end != '\0' || value == 0 || limit[0] == '-') {
        throw_usage("COLLBENCH_OFI_MAX_MESSAGE={}: expected a positive number of bytes", limit);
      }
      max_message_ = std::min<std::size_t>(max_message_, value);
    }
    // Both sides of a message must split it identically, so every rank uses the smallest limit
    // of all (ranks on other devices or hosts may have another provider limit or environment);
    // the same for the tag bits, since a receive matches the sender's sequence only within both.
    int tag_bits =
        info.ep_attr->mem_tag_format ? 64 - __builtin_clzll(info.ep_attr->mem_tag_format) : 64;
    const EndpointLimits limits{max_message_, tag_bits};
    for (const EndpointLimits& other : allgather(bootstrap, limits, "libfabric endpoint limits")) {
      max_message_ = std::min<std::size_t>(max_message_, other.max_message);
      tag_bits = std::min(tag_bits, other.tag_bits);
    }
    if (tag_bits - rank_bits_ < kMinSequenceBits) {
      throw_runtime("the {} provider matches {} tag bits; the ofi backend needs {} for {} ranks",
                    local.provider, tag_bits, rank_bits_ + kMinSequenceBits, size_);
    }
    sequence_mask_ = tag_bits - rank_bits_ >= 64
                         ? ~std::uint64_t{0}
                         : (std::uint64_t{1} << (tag_bits - rank_bits_)) - 1;
    inject_limit_ = info.tx_attr->inject_size;
    inject_flags_ = info.tx_attr->op_flags | FI_INJECT | FI_COMPLETION;
    // Operations in flight stay within the provider's queues: posting a whole split message (or an
    // all-to-all) before reading any completion overflows them (-FI_EAGAIN, or -FI_ENOMEM from
    // shm), and a rank that waits for queue space while its peers wait for its sends never ends.
    const std::size_t tx_size = info.tx_attr->size ? info.tx_attr->size : SIZE_MAX;
    const std::size_t rx_size = info.rx_attr->size ? info.rx_attr->size : SIZE_MAX;
    max_in_flight_ = std::max<std::size_t>(std::min(tx_size, rx_size), 1);
    return tag_bits;
  }

  // What the run context states about the library, the provider and every rank's device.
  void describe_run(const fi_info& info, const ofi::Candidate& local, int tag_bits,
                    Bootstrap& bootstrap) {
    const std::uint32_t runtime = fi_version();
    info_.name = ofi_backend_descriptor().name;
    info_.library = fmt::format("libfabric {}.{} ({} {}.{})", FI_MAJOR(runtime), FI_MINOR(runtime),
                                local.provider, FI_MAJOR(info.fabric_attr->prov_version),
                                FI_MINOR(info.fabric_attr->prov_version));
    info_.memory = MemoryKind::kHost;
    info_.stream_ordered = false;
    info_.network["net"] = "Libfabric";
    info_.network["provider"] = local.provider;
    info_.network["fabric"] = local.fabric;
    // Every rank's interface: ranks on one host spread over its devices.
    std::vector<std::string> devices;
    for (const std::string& domain : allgather(bootstrap, local.domain, "libfabric devices")) {
      if (std::find(devices.begin(), devices.end(), domain) == devices.end())
        devices.push_back(domain);
    }
    info_.network["devices"] = fmt::format("{}", fmt::join(devices, ","));
    info_.network["address_format"] = local.address_format;
    info_.network["gdr"] = "no (host memory)";
    info_.facts["max_msg_size"] = std::to_string(info.ep_attr->max_msg_size);
    info_.facts["message_limit"] = std::to_string(max_message_);
    info_.facts["inject_size"] = std::to_string(inject_limit_);
    info_.facts["tag_bits"] = std::to_string(tag_bits);
    info_.facts["idle_polling"] = idle_.why;
    info_.facts["registered"] =
        register_ ? ((mr_mode_ & FI_MR_LOCAL) ? "yes (provider needs FI_MR_LOCAL)" : "yes (-R)")
                  : "no";
  }

  void connect(Bootstrap& bootstrap) {
    std::string name(64, '\0');
    std::size_t length = name.size();
    int rc = fi_getname(&endpoint_->fid, name.data(), &length);
    if (rc == -FI_ETOOSMALL) {
      name.resize(length);
      rc = fi_getname(&endpoint_->fid, name.data(), &length);
    }
    OFI_CHECK(rc);
    name.resize(length);
    // Endpoint names are binary (a sockaddr, an EFA GID and QPN): they travel as bytes.
    const auto names = allgather(bootstrap, std::vector<std::uint8_t>(name.begin(), name.end()),
                                 "libfabric endpoint names");
    addresses_.resize(names.size());
    for (std::size_t r = 0; r < names.size(); ++r) {
      const int inserted = fi_av_insert(av_.get(), names[r].data(), 1, &addresses_[r], 0, nullptr);
      if (inserted != 1) {
        throw_runtime(
            "fi_av_insert: rank {} could not add the address of rank {} ({}); the {} provider "
            "cannot reach it",
            rank_, r, inserted < 0 ? fi_strerror(-inserted) : "not inserted",
            info_.network["provider"]);
      }
    }
  }

  void* descriptor(const void* pointer, std::size_t bytes) const {
    if (!register_ || registrations_.empty()) return nullptr;
    const char* p = static_cast<const char*>(pointer);
    auto it = registrations_.upper_bound(p);
    if (it == registrations_.begin()) return nullptr;
    --it;
    if (p + bytes > it->first + it->second.bytes) return nullptr;
    return fi_mr_desc(it->second.mr.get());
  }

  std::uint64_t tag(int sender, std::uint64_t sequence) const {
    return ((sequence & sequence_mask_) << rank_bits_) | static_cast<std::uint64_t>(sender);
  }

  /// Posts one operation, driving progress while the provider's queue is full (-FI_EAGAIN).
  template <typename Post>
  void post(Post&& call, const char* what) {
    for (;;) {
      const ssize_t rc = call();
      if (rc == 0) return;
      if (rc != -FI_EAGAIN) ofi::fail(rc, what, __FILE__, __LINE__);
      progress();
    }
  }

  void queue_send(const void* data, std::size_t bytes, int peer) {
    split(sends_, const_cast<char*>(static_cast<const char*>(data)), bytes, peer, rank_,
          send_seq_[static_cast<std::size_t>(peer)]);
  }

  void queue_recv(void* data, std::size_t bytes, int peer) {
    split(recvs_, static_cast<char*>(data), bytes, peer, peer,
          recv_seq_[static_cast<std::size_t>(peer)]);
  }

  /// Queues a message for flush() as pieces of at most the agreed limit (both sides split it
  /// identically), each tagged with its sender and the next sequence number of its direction.
  void split(std::vector<Piece>& queue, char* data, std::size_t bytes, int peer, int sender,
             std::uint64_t& sequence) {
    std::size_t offset = 0;
    do {
      const std::size_t chunk = std::min(bytes - offset, max_message_);
      queue.push_back(Piece{data + offset, chunk, peer, tag(sender, sequence++)});
      offset += chunk;
    } while (offset < bytes);
  }

  /// Posts the queued pieces, a receive and a send in turn (bibw and all-to-all queue every
  /// receive or every send of a peer first: posted in that order, two ranks could each fill their
  /// queues with sends the other has not posted receives for yet), never more in flight than the
  /// provider's queues hold.
  void flush() {
    std::size_t r = 0, s = 0;
    while (r < recvs_.size() || s < sends_.size()) {
      if (r < recvs_.size()) start_recv(recvs_[r++]);
      if (s < sends_.size()) start_send(sends_[s++]);
    }
    recvs_.clear();
    sends_.clear();
  }

  void make_room() {
    while (pending_ >= max_in_flight_) progress();
  }

  void start_send(const Piece& piece) {
    make_room();
    void* desc = descriptor(piece.data, piece.bytes);
    const fi_addr_t to = addresses_[static_cast<std::size_t>(piece.peer)];
    fi_context2& context = contexts_.emplace_back();
    if (piece.bytes <= inject_limit_) {
      // Small messages go inline: the buffer is reusable at once. Unlike fi_tinject, this asks for
      // a completion: under manual progress (EFA, rxm) an injected message may still sit in the
      // provider's queue, and a rank that stopped reading its queue (a bootstrap barrier) while
      // its peer waits for that message would hang both.
      iovec iov{piece.data, piece.bytes};
      fi_msg_tagged msg{};
      msg.msg_iov = &iov;
      msg.desc = &desc;
      msg.iov_count = 1;
      msg.addr = to;
      msg.tag = piece.tag;
      msg.context = &context;
      post([&] { return fi_tsendmsg(endpoint_.get(), &msg, inject_flags_); },
           "fi_tsendmsg (inject)");
    } else {
      post(
          [&] {
            return fi_tsend(endpoint_.get(), piece.data, piece.bytes, desc, to, piece.tag,
                            &context);
          },
          "fi_tsend");
    }
    ++pending_;
  }

  void start_recv(const Piece& piece) {
    make_room();
    void* desc = descriptor(piece.data, piece.bytes);
    fi_context2& context = contexts_.emplace_back();
    post(
        [&] {
          return fi_trecv(endpoint_.get(), piece.data, piece.bytes, desc,
                          addresses_[static_cast<std::size_t>(piece.peer)], piece.tag, 0, &context);
        },
        "fi_trecv");
    ++pending_;
  }

  /// Reads completions; a failed operation ends the run with the provider's own explanation.
  void progress() {
    // Every operation is waited for as a whole group, so a completion only needs counting.
    fi_cq_entry entries[16];
    const ssize_t n = fi_cq_read(cq_.get(), entries, 16);
    if (n > 0) {
      pending_ -= std::min(pending_, static_cast<std::size_t>(n));
      return;
    }
    if (n == -FI_EAGAIN) {
      if (idle_.yield) std::this_thread::yield();
      return;
    }
    if (n == -FI_EAVAIL) {
      fi_cq_err_entry error{};
      const ssize_t read = fi_cq_readerr(cq_.get(), &error, 0);
      if (read == -FI_EAGAIN) return;  // not yet visible: fi_cq_read reports it again
      if (read < 0) ofi::fail(read, "fi_cq_readerr", __FILE__, __LINE__);
      char detail[256] = {};
      const char* text =
          fi_cq_strerror(cq_.get(), error.prov_errno, error.err_data, detail, sizeof detail);
      throw_runtime("libfabric ({}): an operation failed on rank {}: {} ({})",
                    info_.network["provider"], rank_, fi_strerror(error.err),
                    text ? text : "no provider detail");
    }
    ofi::fail(n, "fi_cq_read", __FILE__, __LINE__);
  }

  void wait_all() {
    flush();
    while (pending_ > 0) progress();
    contexts_.clear();
  }

  int rank_;
  int size_;
  std::unique_ptr<Device> device_;
  BackendInfo info_;
  Handle<fid_fabric> fabric_;
  Handle<fid_domain> domain_;
  Handle<fid_cq> cq_;
  Handle<fid_av> av_;
  Handle<fid_ep> endpoint_;
  std::vector<fi_addr_t> addresses_;
  std::vector<std::uint64_t> send_seq_;
  std::vector<std::uint64_t> recv_seq_;
  int rank_bits_ = 1;
  std::uint64_t sequence_mask_ = ~std::uint64_t{0};
  std::vector<Piece> sends_;
  std::vector<Piece> recvs_;
  std::size_t max_in_flight_ = SIZE_MAX;
  std::uint64_t inject_flags_ = 0;
  // Each posted operation's context: the provider's scratch space under FI_CONTEXT/FI_CONTEXT2,
  // at a stable address until the operation completes.
  std::deque<fi_context2> contexts_;
  std::size_t pending_ = 0;
  bool in_group_ = false;
  std::size_t max_message_ = SIZE_MAX;
  std::size_t inject_limit_ = 0;
  std::uint64_t mr_mode_ = 0;
  bool register_ = false;
  ofi::IdlePolling idle_;
  std::uint64_t next_key_ = 1;
  std::map<const char*, Registration> registrations_;
};

}  // namespace

std::unique_ptr<Backend> make_ofi_backend(const Options&, const BackendArgs& args,
                                          Bootstrap& bootstrap) {
  return std::make_unique<OfiBackend>(args, bootstrap);
}

}  // namespace collbench
