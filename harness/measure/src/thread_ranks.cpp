#include "collbench/thread_ranks.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>

#include "collbench/error.h"
#include "collbench/wire.h"

namespace collbench {
namespace {

double combine(double a, double b, ScalarOp op) {
  switch (op) {
    case ScalarOp::kSum:
      return a + b;
    case ScalarOp::kMin:
      return std::min(a, b);
    case ScalarOp::kMax:
      return std::max(a, b);
  }
  return a;
}

/// One rank of a process with several: its place in the job, and the process's collectives.
class ThreadRankBootstrap final : public Bootstrap {
 public:
  ThreadRankBootstrap(ThreadRanks& ranks, int index) : ranks_(ranks), index_(index) {}

  int rank() const override { return process().rank() * k() + index_; }
  int size() const override { return process().size() * k(); }
  int local_rank() const override { return process().local_rank() * k() + index_; }
  int local_size() const override { return process().local_size() * k(); }
  int node_count() const override { return process().node_count(); }
  std::string hostname() const override { return process().hostname(); }
  std::string runtime_version() const override { return process().runtime_version(); }

  void barrier() override {
    ranks_.step(index_, {}, [this](const std::vector<std::string>&) {
      process().barrier();
      return std::vector<std::string>{};
    });
  }

  void broadcast(std::string& bytes, int root) override {
    const int root_process = root / k(), root_index = root % k();
    bytes = ranks_.step(index_, bytes, [&](const std::vector<std::string>& deposits) {
      std::string message = process().rank() == root_process
                                ? deposits[static_cast<std::size_t>(root_index)]
                                : std::string();
      process().broadcast(message, root_process);
      return std::vector<std::string>{message};
    })[0];
  }

  std::vector<std::string> allgather(const std::string& bytes) override {
    return ranks_.step(index_, bytes, [this](const std::vector<std::string>& deposits) {
      return flatten(process().allgather(pack_messages(deposits)));
    });
  }

  std::vector<std::string> gather(const std::string& bytes, int root) override {
    const int root_process = root / k();
    auto all = ranks_.step(index_, bytes, [&](const std::vector<std::string>& deposits) {
      const auto packed = process().gather(pack_messages(deposits), root_process);
      return process().rank() == root_process ? flatten(packed) : std::vector<std::string>{};
    });
    if (rank() != root) all.clear();
    return all;
  }

  double allreduce(double value, ScalarOp op) override {
    const auto reduced =
        ranks_.step(index_, wire::encode(value), [&](const std::vector<std::string>& deposits) {
          const auto values = decode_from_ranks<double>(deposits, "a reduction value");
          double local = values.front();
          for (std::size_t i = 1; i < values.size(); ++i) local = combine(local, values[i], op);
          return std::vector<std::string>{wire::encode(process().allreduce(local, op))};
        });
    return wire::decode<double>(reduced[0], "the reduced value");
  }

  std::unique_ptr<Bootstrap> split(int /*color*/, int /*key*/) override {
    // The command line refuses --split with -t/-g above 1 before anything runs.
    throw std::logic_error("thread ranks: split() is not supported");
  }

  [[noreturn]] void abort(int code, const std::string& why) override {
    process().abort(code, why);
    std::_Exit(code);  // not reached: the process's abort ends it
  }

 private:
  Bootstrap& process() const { return ranks_.process(); }
  int k() const { return ranks_.per_process(); }

  /// Each process's packed messages, as one message per rank in rank order.
  std::vector<std::string> flatten(const std::vector<std::string>& packed) const {
    std::vector<std::string> out;
    out.reserve(packed.size() * static_cast<std::size_t>(k()));
    for (std::size_t p = 0; p < packed.size(); ++p) {
      auto messages = unpack_messages(packed[p], fmt::format("the ranks of process {}", p));
      if (static_cast<int>(messages.size()) != k()) {
        throw_runtime(
            "process {} runs {} ranks and process {} runs {}: give every process the same -t and "
            "-g",
            p, messages.size(), process().rank(), k());
      }
      for (auto& m : messages) out.push_back(std::move(m));
    }
    return out;
  }

  ThreadRanks& ranks_;
  int index_;
};

}  // namespace

ThreadRanks::ThreadRanks(Bootstrap& process, int per_process)
    : process_(process),
      per_process_(per_process),
      barrier_(per_process),
      deposits_(static_cast<std::size_t>(per_process)) {
  if (per_process < 1) throw std::invalid_argument("ThreadRanks: per_process must be >= 1");
}

std::unique_ptr<Bootstrap> ThreadRanks::bootstrap(int index) {
  if (index < 0 || index >= per_process_) {
    throw std::out_of_range("ThreadRanks::bootstrap: no such rank in this process");
  }
  return std::make_unique<ThreadRankBootstrap>(*this, index);
}

std::vector<int> ThreadRanks::run(const std::function<int(int)>& body) {
  const auto n = static_cast<std::size_t>(per_process_);
  std::vector<int> results(n, 0);
  std::vector<std::exception_ptr> failures(n);
  auto one = [&](int i) {
    try {
      results[static_cast<std::size_t>(i)] = body(i);
    } catch (...) {
      failures[static_cast<std::size_t>(i)] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  threads.reserve(n - 1);
  for (int i = 1; i < per_process_; ++i) threads.emplace_back(one, i);
  one(0);
  for (auto& t : threads) t.join();
  for (const auto& f : failures) {
    if (f) std::rethrow_exception(f);
  }
  return results;
}

std::vector<std::string> ThreadRanks::step(
    int index, std::string mine,
    const std::function<std::vector<std::string>(const std::vector<std::string>&)>& across) {
  deposits_[static_cast<std::size_t>(index)] = std::move(mine);
  barrier_.arrive_and_wait();
  if (index == 0) {
    failure_ = nullptr;
    try {
      result_ = across(deposits_);
    } catch (...) {
      failure_ = std::current_exception();
    }
  }
  barrier_.arrive_and_wait();
  std::vector<std::string> out = result_;
  const std::exception_ptr failure = failure_;
  // Nobody deposits for the next step before everyone has read this one.
  barrier_.arrive_and_wait();
  if (failure) std::rethrow_exception(failure);
  return out;
}

std::string pack_messages(const std::vector<std::string>& messages) {
  nlohmann::json all = nlohmann::json::array();
  for (const auto& m : messages) {
    all.push_back(nlohmann::json::binary(std::vector<std::uint8_t>(m.begin(), m.end())));
  }
  const std::vector<std::uint8_t> bytes = nlohmann::json::to_cbor(all);
  return std::string(bytes.begin(), bytes.end());
}

std::vector<std::string> unpack_messages(std::string_view bytes, std::string_view what) {
  const auto all = nlohmann::json::from_cbor(bytes.begin(), bytes.end(), true, false);
  if (all.is_discarded() || !all.is_array()) {
    throw_runtime("{}: malformed message ({} bytes that are not a list of messages)", what,
                  bytes.size());
  }
  std::vector<std::string> out;
  out.reserve(all.size());
  for (const auto& m : all) {
    if (!m.is_binary()) throw_runtime("{}: malformed message (an element is not bytes)", what);
    const auto& b = m.get_binary();
    out.emplace_back(b.begin(), b.end());
  }
  return out;
}

}  // namespace collbench
