// Bootstrap: who am I and how do the ranks agree. Control-plane traffic (iteration counts,
// timings, the NCCL unique id) goes through here, never through the backend under test.
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/wire.h"

namespace collbench {

enum class ScalarOp { kSum, kMin, kMax };

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Rank among the ranks on this host, and how many share the host.
  virtual int local_rank() const = 0;
  virtual int local_size() const = 0;
  /// Number of distinct hosts in the job.
  virtual int node_count() const = 0;
  virtual std::string hostname() const = 0;
  /// Name and version of the launcher's runtime (e.g. "Open MPI v4.1.4"), for the run context.
  virtual std::string runtime_version() const = 0;

  virtual void barrier() = 0;
  /// The byte transport under the typed helpers below; callers use those.
  /// Replaces `bytes` on every rank with root's bytes (sizes may differ before the call).
  virtual void broadcast(std::string& bytes, int root) = 0;
  /// Every rank's bytes, indexed by rank.
  virtual std::vector<std::string> allgather(const std::string& bytes) = 0;
  /// Every rank's bytes on `root` (indexed by rank); empty on the other ranks.
  virtual std::vector<std::string> gather(const std::string& bytes, int root) = 0;
  virtual double allreduce(double value, ScalarOp op) = 0;
  /// Collective over every rank: the ranks of each `color` form a group, ordered by `key` (then
  /// by rank), with a bootstrap of their own. A negative color sits out: nullptr. --split runs a
  /// backend on each group's bootstrap. A group's local_rank() and local_size() stay this
  /// process's place on its host in the whole job: the devices, NICs and memory of a host are
  /// shared by all its ranks, whichever group they are in.
  virtual std::unique_ptr<Bootstrap> split(int color, int key) = 0;
  /// Ends every rank of the job with `code`; `why` has already been reported.
  [[noreturn]] virtual void abort(int code, const std::string& why) = 0;
  /// The process's last step before it exits with `exit_status`, every output written and
  /// closed: ends its part in the launcher's job (MPI: MPI_Finalize). Without it, destruction
  /// does the same on a path that could not decide a status.
  virtual void finish(int exit_status) { (void)exit_status; }
};

/// A bootstrap for a single process (no launcher): rank 0 of 1.
std::unique_ptr<Bootstrap> make_single_process_bootstrap();

// Typed messages: every value is encoded one way (collbench/wire.h) and decoded with its type
// checked; `what` names the exchange in the error a malformed message raises.

/// Decodes one message per rank, indexed by rank.
template <typename T>
std::vector<T> decode_from_ranks(const std::vector<std::string>& messages, std::string_view what) {
  std::vector<T> out;
  out.reserve(messages.size());
  for (std::size_t r = 0; r < messages.size(); ++r) {
    out.push_back(wire::decode<T>(messages[r], fmt::format("{} (from rank {})", what, r)));
  }
  return out;
}

/// Every rank's value, indexed by rank.
template <typename T>
std::vector<T> allgather(Bootstrap& bootstrap, const T& mine, std::string_view what) {
  return decode_from_ranks<T>(bootstrap.allgather(wire::encode(mine)), what);
}

/// Every rank's value on `root`, indexed by rank; empty on the other ranks.
template <typename T>
std::vector<T> gather(Bootstrap& bootstrap, const T& mine, int root, std::string_view what) {
  return decode_from_ranks<T>(bootstrap.gather(wire::encode(mine), root), what);
}

/// Root's value on every rank.
template <typename T>
T broadcast(Bootstrap& bootstrap, const T& value, int root, std::string_view what) {
  std::string bytes = bootstrap.rank() == root ? wire::encode(value) : std::string();
  bootstrap.broadcast(bytes, root);
  return wire::decode<T>(bytes, fmt::format("{} (from rank {})", what, root));
}

/// Every rank's host name, indexed by rank.
std::vector<std::string> gather_hostnames(Bootstrap& bootstrap);

}  // namespace collbench
