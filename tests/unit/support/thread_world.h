// An in-process job: N ranks as N threads, with a Bootstrap and a host-memory Backend that
// implement every primitive with NCCL's semantics. Lets the runner, the collective specs and
// verification be tested end to end without MPI, and makes faults easy to inject.
#pragma once

#include <barrier>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "collbench/backend.h"
#include "collbench/bootstrap.h"

namespace collbench::testing {

/// State shared by the ranks of one in-process job.
class ThreadWorld {
 public:
  explicit ThreadWorld(int nranks, std::vector<std::string> hosts = {});

  int size() const { return nranks_; }
  std::string host(int rank) const { return hosts_[static_cast<std::size_t>(rank)]; }

  /// Runs `body(rank)` on one thread per rank and joins them. Exceptions are rethrown (first).
  void run(const std::function<void(int rank)>& body);

  std::unique_ptr<Bootstrap> make_bootstrap(int rank);
  std::unique_ptr<Backend> make_backend(int rank);
  /// The backend of a group: `bootstrap` is one this world (or a split of it) made.
  static std::unique_ptr<Backend> backend_for(Bootstrap& bootstrap);

  /// Bootstrap::split: the job of the ranks of `color` in split number `generation`, made by
  /// the first of its ranks to ask and shared by the others.
  ThreadWorld& subworld(int generation, int color, std::vector<std::string> hosts);

  // --- used by the rank objects
  void arrive() { barrier_.arrive_and_wait(); }
  /// Every rank deposits `bytes`; every rank gets all deposits (indexed by rank).
  std::vector<std::string> exchange(int rank, std::string bytes);
  void post(int from, int to, std::string bytes);
  std::string take(int from, int to);

 private:
  int nranks_;
  std::vector<std::string> hosts_;
  std::barrier<> barrier_;
  std::vector<std::string> slots_;
  std::mutex mutex_;
  std::condition_variable mail_;
  std::map<std::pair<int, int>, std::deque<std::string>> mailboxes_;
  std::map<std::pair<int, int>, std::unique_ptr<ThreadWorld>> subworlds_;
};

}  // namespace collbench::testing
