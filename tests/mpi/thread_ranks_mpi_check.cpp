// Several ranks per process over the real MPI bootstrap: each process runs 3 ranks on threads
// (only the first calls MPI), and every collective the runner relies on is checked against the
// rank order nccl-tests gives (rank p·3 + i). Exit 0 when every rank saw what it should, 1
// otherwise, with one line per problem. Run under mpirun by CTest (2 and 3 processes).
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

#include "backends/mpi/mpi_bootstrap.h"
#include "collbench/thread_ranks.h"

namespace {

std::mutex print_mutex;

int problem(const collbench::Bootstrap& b, const std::string& what) {
  const std::lock_guard lock(print_mutex);
  std::fprintf(stderr, "rank %d: %s\n", b.rank(), what.c_str());
  return 1;
}

int check_rank(collbench::Bootstrap& b, int processes) {
  constexpr int kPerProcess = 3;
  const int n = processes * kPerProcess, me = b.rank();
  int failures = 0;
  if (b.size() != n) failures += problem(b, "size " + std::to_string(b.size()));
  if (b.local_size() != processes * kPerProcess) {
    // mpirun puts every process on this host.
    failures += problem(b, "local size " + std::to_string(b.local_size()));
  }
  const auto all = collbench::allgather(b, me, "allgather");
  for (int r = 0; r < n; ++r) {
    if (static_cast<int>(all.size()) != n || all[static_cast<std::size_t>(r)] != r) {
      failures += problem(b, "allgather out of rank order");
      break;
    }
  }
  for (int root = 0; root < n; ++root) {
    const int got = collbench::broadcast(b, me * 7, root, "broadcast");
    if (got != root * 7) failures += problem(b, "broadcast from " + std::to_string(root));
  }
  const int root = n - 2;  // the middle rank of the last process
  const auto gathered = collbench::gather(b, std::to_string(me), root, "gather");
  if (me == root) {
    for (int r = 0; r < n; ++r) {
      if (static_cast<int>(gathered.size()) != n ||
          gathered[static_cast<std::size_t>(r)] != std::to_string(r)) {
        failures += problem(b, "gather out of rank order");
        break;
      }
    }
  } else if (!gathered.empty()) {
    failures += problem(b, "gather delivered to a rank that is not the root");
  }
  if (b.allreduce(me, collbench::ScalarOp::kSum) != n * (n - 1) / 2.0) {
    failures += problem(b, "allreduce sum");
  }
  if (b.allreduce(me, collbench::ScalarOp::kMax) != n - 1.0) failures += problem(b, "max");
  b.barrier();
  // Every rank learns whether any failed.
  return b.allreduce(failures, collbench::ScalarOp::kSum) == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  auto process = collbench::make_mpi_bootstrap(&argc, &argv);
  collbench::ThreadRanks ranks(*process, 3);
  const int processes = process->size();
  const auto statuses = ranks.run([&](int index) {
    auto mine = ranks.bootstrap(index);
    return check_rank(*mine, processes);
  });
  for (int s : statuses) {
    if (s != 0) return 1;
  }
  if (process->rank() == 0)
    std::printf("%d processes x 3 ranks: every collective in rank order\n", processes);
  return 0;
}
