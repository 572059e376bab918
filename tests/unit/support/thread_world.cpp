#include "thread_world.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <set>
#include <thread>

#include "collbench/error.h"
#include "collbench/host_device.h"
#include "collbench/pattern.h"

namespace collbench::testing {

ThreadWorld::ThreadWorld(int nranks, std::vector<std::string> hosts)
    : nranks_(nranks),
      hosts_(std::move(hosts)),
      barrier_(nranks),
      slots_(static_cast<std::size_t>(nranks)) {
  if (hosts_.empty()) hosts_.assign(static_cast<std::size_t>(nranks), "localhost");
}

void ThreadWorld::run(const std::function<void(int rank)>& body) {
  std::vector<std::thread> threads;
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(nranks_));
  for (int r = 0; r < nranks_; ++r) {
    threads.emplace_back([&, r] {
      try {
        body(r);
      } catch (...) {
        errors[static_cast<std::size_t>(r)] = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

std::vector<std::string> ThreadWorld::exchange(int rank, std::string bytes) {
  slots_[static_cast<std::size_t>(rank)] = std::move(bytes);
  arrive();
  std::vector<std::string> all = slots_;
  arrive();  // nobody overwrites a slot before everyone has read it
  return all;
}

void ThreadWorld::post(int from, int to, std::string bytes) {
  {
    std::lock_guard lock(mutex_);
    mailboxes_[{from, to}].push_back(std::move(bytes));
  }
  mail_.notify_all();
}

std::string ThreadWorld::take(int from, int to) {
  std::unique_lock lock(mutex_);
  auto& box = mailboxes_[{from, to}];
  mail_.wait(lock, [&] { return !box.empty(); });
  std::string bytes = std::move(box.front());
  box.pop_front();
  return bytes;
}

ThreadWorld& ThreadWorld::subworld(int generation, int color, std::vector<std::string> hosts) {
  std::lock_guard lock(mutex_);
  auto& world = subworlds_[{generation, color}];
  if (!world) {
    const int n = static_cast<int>(hosts.size());
    world = std::make_unique<ThreadWorld>(n, std::move(hosts));
  }
  return *world;
}

namespace {

class ThreadBootstrap final : public Bootstrap {
 public:
  ThreadBootstrap(ThreadWorld& world, int rank) : world_(world), rank_(rank) {
    std::set<std::string> hosts;
    for (int r = 0; r < world.size(); ++r) {
      hosts.insert(world.host(r));
      if (world.host(r) == world.host(rank)) {
        if (r < rank) ++local_rank_;
        ++local_size_;
      }
    }
    nodes_ = static_cast<int>(hosts.size());
  }
  int rank() const override { return rank_; }
  int size() const override { return world_.size(); }
  int local_rank() const override { return local_rank_; }
  int local_size() const override { return local_size_; }
  int node_count() const override { return nodes_; }
  std::string hostname() const override { return world_.host(rank_); }
  std::string runtime_version() const override { return "threads"; }
  void barrier() override { world_.arrive(); }
  void broadcast(std::string& bytes, int root) override {
    bytes = world_.exchange(rank_, bytes)[static_cast<std::size_t>(root)];
  }
  std::vector<std::string> allgather(const std::string& bytes) override {
    return world_.exchange(rank_, bytes);
  }
  std::vector<std::string> gather(const std::string& bytes, int root) override {
    auto all = world_.exchange(rank_, bytes);
    if (rank_ != root) all.clear();
    return all;
  }
  double allreduce(double value, ScalarOp op) override {
    std::string bytes(sizeof(double), '\0');
    std::memcpy(bytes.data(), &value, sizeof(double));
    double out = 0;
    bool first = true;
    for (const auto& s : world_.exchange(rank_, bytes)) {
      double v;
      std::memcpy(&v, s.data(), sizeof(double));
      if (first)
        out = v;
      else if (op == ScalarOp::kSum)
        out += v;
      else if (op == ScalarOp::kMin)
        out = std::min(out, v);
      else
        out = std::max(out, v);
      first = false;
    }
    return out;
  }
  std::unique_ptr<Bootstrap> split(int color, int key) override {
    const auto all = decode_from_ranks<std::vector<int>>(
        world_.exchange(rank_, wire::encode(std::vector<int>{color, key})), "split");
    const int generation = splits_++;
    if (color < 0) return nullptr;
    std::vector<std::pair<int, int>> members;  // (key, rank)
    for (int r = 0; r < world_.size(); ++r) {
      if (all[static_cast<std::size_t>(r)][0] == color) {
        members.emplace_back(all[static_cast<std::size_t>(r)][1], r);
      }
    }
    std::sort(members.begin(), members.end());
    std::vector<std::string> hosts;
    int mine = 0;
    for (std::size_t i = 0; i < members.size(); ++i) {
      hosts.push_back(world_.host(members[i].second));
      if (members[i].second == rank_) mine = static_cast<int>(i);
    }
    auto group = std::make_unique<ThreadBootstrap>(world_.subworld(generation, color, hosts), mine);
    group->local_rank_ = local_rank_;  // the place on the host is the whole job's
    group->local_size_ = local_size_;
    return group;
  }
  [[noreturn]] void abort(int code, const std::string& why) override {
    throw Error(static_cast<ExitCode>(code), "abort: " + why);
  }

  ThreadWorld& world() const { return world_; }

 private:
  ThreadWorld& world_;
  int rank_;
  int splits_ = 0;
  int local_rank_ = 0;
  int local_size_ = 0;
  int nodes_ = 1;
};

/// Clamps a double to an integer dtype's range (timed in-place iterations keep reducing their
/// own output, so values grow without bound; converting an out-of-range double is undefined).
double saturate(double v, DType t) {
  double lo = 0, hi = 0;
  switch (t) {
    case DType::kInt8:
      lo = -128, hi = 127;
      break;
    case DType::kUint8:
      lo = 0, hi = 255;
      break;
    case DType::kInt32:
      lo = -2147483648.0, hi = 2147483647.0;
      break;
    case DType::kUint32:
      lo = 0, hi = 4294967295.0;
      break;
    case DType::kInt64:
      lo = -9223372036854775808.0, hi = 9223372036854774784.0;
      break;
    case DType::kUint64:
      lo = 0, hi = 18446744073709549568.0;
      break;
    default:
      return v;  // floating types: inf and NaN are values
  }
  if (!(v == v)) return 0;
  return v < lo ? lo : (v > hi ? hi : v);
}

/// Host-memory backend with NCCL's semantics for every primitive, computed in double (exact for
/// the verification pattern; avg rounds once, within the pattern's tolerance).
class ThreadBackend final : public Backend {
 public:
  ThreadBackend(ThreadWorld& world, int rank, int ranks_on_host)
      : world_(world), rank_(rank), device_(make_host_device(ranks_on_host)) {
    info_.name = "thread";
    info_.library = "in-process threads";
  }
  const BackendInfo& info() const override { return info_; }
  Device& device() override { return *device_; }
  std::optional<std::string> unsupported(Primitive, DType, ReduceOp) const override {
    return std::nullopt;
  }

  void submit(const CollArgs& a) override {
    if (in_group_ && a.primitive == Primitive::kRecv) {
      deferred_.push_back(a);  // receives after every send of the group, as a group allows
      return;
    }
    execute(a);
  }
  void group_begin() override { in_group_ = true; }
  void group_end() override {
    in_group_ = false;
    for (const auto& a : deferred_) execute(a);
    deferred_.clear();
  }
  void synchronize() override {}

 private:
  void execute(const CollArgs& a) {
    const std::size_t es = size_of(a.dtype);
    const int n = world_.size();
    auto bytes_of = [&](const void* p, std::size_t elements) {
      return std::string(static_cast<const char*>(p), elements * es);
    };
    auto reduce_into = [&](void* out, const std::vector<std::string>& inputs, std::size_t offset,
                           std::size_t count) {
      for (std::size_t i = 0; i < count; ++i) {
        double acc = 0;
        for (int r = 0; r < n; ++r) {
          const double v =
              pattern::load(inputs[static_cast<std::size_t>(r)].data(), offset + i, a.dtype);
          if (r == 0)
            acc = v;
          else if (a.op == ReduceOp::kSum || a.op == ReduceOp::kAvg)
            acc += v;
          else if (a.op == ReduceOp::kProd)
            acc *= v;
          else if (a.op == ReduceOp::kMax)
            acc = std::max(acc, v);
          else
            acc = std::min(acc, v);
        }
        if (a.op == ReduceOp::kAvg) {
          acc = pattern::dtype_is_floating(a.dtype)
                    ? acc / n
                    : static_cast<double>(static_cast<std::int64_t>(acc) / n);
        }
        pattern::store(out, i, a.dtype, saturate(acc, a.dtype));
      }
    };
    switch (a.primitive) {
      case Primitive::kAllReduce:
        reduce_into(a.recv, world_.exchange(rank_, bytes_of(a.send, a.count)), 0, a.count);
        break;
      case Primitive::kReduce: {
        const auto inputs = world_.exchange(rank_, bytes_of(a.send, a.count));
        if (rank_ == a.root) reduce_into(a.recv, inputs, 0, a.count);
        break;
      }
      case Primitive::kReduceScatter:
        reduce_into(a.recv,
                    world_.exchange(rank_, bytes_of(a.send, a.count * static_cast<std::size_t>(n))),
                    a.count * static_cast<std::size_t>(rank_), a.count);
        break;
      case Primitive::kAllGather:
      case Primitive::kGather: {
        const auto inputs = world_.exchange(rank_, bytes_of(a.send, a.count));
        if (a.primitive == Primitive::kGather && rank_ != a.root) break;  // only the root receives
        for (int r = 0; r < n; ++r) {
          std::memcpy(static_cast<char*>(a.recv) + static_cast<std::size_t>(r) * a.count * es,
                      inputs[static_cast<std::size_t>(r)].data(), a.count * es);
        }
        break;
      }
      case Primitive::kBroadcast: {
        const auto inputs =
            world_.exchange(rank_, rank_ == a.root ? bytes_of(a.send, a.count) : std::string());
        std::memcpy(a.recv, inputs[static_cast<std::size_t>(a.root)].data(), a.count * es);
        break;
      }
      case Primitive::kAllToAll: {
        const auto inputs =
            world_.exchange(rank_, bytes_of(a.send, a.count * static_cast<std::size_t>(n)));
        for (int p = 0; p < n; ++p) {
          std::memcpy(static_cast<char*>(a.recv) + static_cast<std::size_t>(p) * a.count * es,
                      inputs[static_cast<std::size_t>(p)].data() +
                          static_cast<std::size_t>(rank_) * a.count * es,
                      a.count * es);
        }
        break;
      }
      case Primitive::kScatter: {
        const auto inputs = world_.exchange(
            rank_, rank_ == a.root ? bytes_of(a.send, a.count * static_cast<std::size_t>(n))
                                   : std::string());
        std::memcpy(a.recv,
                    inputs[static_cast<std::size_t>(a.root)].data() +
                        static_cast<std::size_t>(rank_) * a.count * es,
                    a.count * es);
        break;
      }
      case Primitive::kSend:
        world_.post(rank_, a.peer, bytes_of(a.send, a.count));
        break;
      case Primitive::kRecv: {
        const std::string data = world_.take(a.peer, rank_);
        std::memcpy(a.recv, data.data(), std::min(data.size(), a.count * es));
        break;
      }
    }
  }

  ThreadWorld& world_;
  int rank_;
  std::unique_ptr<Device> device_;
  BackendInfo info_;
  bool in_group_ = false;
  std::vector<CollArgs> deferred_;
};

}  // namespace

std::unique_ptr<Bootstrap> ThreadWorld::make_bootstrap(int rank) {
  return std::make_unique<ThreadBootstrap>(*this, rank);
}

std::unique_ptr<Backend> ThreadWorld::backend_for(Bootstrap& bootstrap) {
  auto& thread = dynamic_cast<ThreadBootstrap&>(bootstrap);
  return thread.world().make_backend(thread.rank());
}

std::unique_ptr<Backend> ThreadWorld::make_backend(int rank) {
  int on_host = 0;
  for (int r = 0; r < nranks_; ++r) on_host += host(r) == host(rank) ? 1 : 0;
  return std::make_unique<ThreadBackend>(*this, rank, on_host);
}

}  // namespace collbench::testing
