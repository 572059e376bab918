// Several ranks in one process, as nccl-tests' -t (threads per process) and -g (GPUs per thread)
// make them: the job has processes × threads × GPUs ranks, and rank p·k + i is the i-th of the k
// ranks of process p, on the process's i-th GPU. collbench gives each of them a thread, a
// bootstrap (ThreadRanks::bootstrap), a backend with one GPU and one NCCL communicator, and a
// runner. The ranks of a process reach the other processes through the process's own
// bootstrap, which only its first rank calls: that rank runs on the main thread, so MPI is
// still called from one thread only.
#pragma once

#include <barrier>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "collbench/bootstrap.h"

namespace collbench {

/// What the ranks of one process share.
class ThreadRanks {
 public:
  /// `process`: the launcher's bootstrap (one rank per process); `per_process` >= 1.
  ThreadRanks(Bootstrap& process, int per_process);
  ThreadRanks(const ThreadRanks&) = delete;
  ThreadRanks& operator=(const ThreadRanks&) = delete;

  int per_process() const { return per_process_; }
  Bootstrap& process() { return process_; }
  /// The bootstrap of this process's rank `index` (0 .. per_process-1). Its collectives wait
  /// for every rank of the process: each must be called from that rank's own thread.
  std::unique_ptr<Bootstrap> bootstrap(int index);

  /// Runs `body(index)` for every rank of the process: index 0 on the calling thread, the
  /// others on threads of their own, and joins them. Returns each rank's result, by index.
  std::vector<int> run(const std::function<int(int index)>& body);

  /// One collective step of the process's ranks: every rank deposits `mine`; rank 0 passes the
  /// deposits (by index) to `across`, which talks to the other processes; every rank gets what
  /// `across` returned. An exception from `across` is rethrown on every rank.
  std::vector<std::string> step(
      int index, std::string mine,
      const std::function<std::vector<std::string>(const std::vector<std::string>& deposits)>&
          across);

 private:
  Bootstrap& process_;
  int per_process_;
  std::barrier<> barrier_;
  std::vector<std::string> deposits_;
  std::vector<std::string> result_;
  std::exception_ptr failure_;
};

/// The bytes of several messages as one (CBOR, each a byte string), and back: what one process
/// sends on behalf of its ranks.
std::string pack_messages(const std::vector<std::string>& messages);
std::vector<std::string> unpack_messages(std::string_view bytes, std::string_view what);

}  // namespace collbench
