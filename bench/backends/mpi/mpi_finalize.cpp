#include "mpi_finalize.h"

#include <mpi.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <iterator>

namespace collbench {
namespace {

// Read by the signal handler, so written before it is installed and never after.
volatile std::sig_atomic_t g_exit_status = 0;

// The note, written with write(2): the only output a signal handler may make.
constexpr char kNote[] =
    "collbench: note: the MPI library crashed in MPI_Finalize, after this process had written "
    "everything; exiting with the run's status\n";

extern "C" void on_fault_in_finalize(int) {
  const ssize_t written = write(STDERR_FILENO, kNote, sizeof(kNote) - 1);
  (void)written;  // nothing more can be done about a failed write here
  _exit(g_exit_status);
}

constexpr int kFaults[] = {SIGSEGV, SIGBUS};

}  // namespace

void finalize_mpi(int exit_status) {
  // _exit skips stdio's buffers: whatever is still in them goes out now.
  std::fflush(nullptr);
  g_exit_status = exit_status;
  struct sigaction guard {};
  guard.sa_handler = on_fault_in_finalize;
  sigemptyset(&guard.sa_mask);
  struct sigaction previous[std::size(kFaults)] = {};
  for (std::size_t i = 0; i < std::size(kFaults); ++i) {
    sigaction(kFaults[i], &guard, &previous[i]);
  }
  MPI_Finalize();
  // Past MPI: a fault from here on is collbench's own, and must stay visible.
  for (std::size_t i = 0; i < std::size(kFaults); ++i) {
    sigaction(kFaults[i], &previous[i], nullptr);
  }
}

}  // namespace collbench
