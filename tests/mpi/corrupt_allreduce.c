/* A PMPI interposer for the tests: preloaded into collbench, it flips one bit of the first
 * element MPI_Allreduce returns on the rank named by COLLBENCH_TEST_CORRUPT_RANK, so that the
 * real binary under mpirun must notice wrong data and exit 1. Single-double reductions (the
 * control plane's own agreement traffic) are left alone. */
#include <mpi.h>
#include <stdlib.h>

int MPI_Allreduce(const void* send, void* recv, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm) {
  const int rc = PMPI_Allreduce(send, recv, count, type, op, comm);
  static int target = -2;
  if (target == -2) {
    const char* value = getenv("COLLBENCH_TEST_CORRUPT_RANK");
    target = value ? atoi(value) : -1;
  }
  int rank = -1;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == target && count > 1) ((unsigned char*)recv)[0] ^= 0x01;
  return rc;
}
