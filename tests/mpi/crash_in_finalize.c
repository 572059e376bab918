/* A PMPI interposer for the tests: preloaded into collbench, it makes MPI_Finalize fault on a
 * thread of its own once the real finalize has run, as Open MPI 4.1's teardown now and then does
 * (open-mpi/ompi#10117), so that the tests can check what a finished run does then. */
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>

static void* fault(void* unused) {
  (void)unused;
  volatile int* nowhere = (volatile int*)(uintptr_t)8;
  *nowhere = 1;
  return NULL;
}

int MPI_Finalize(void) {
  const int rc = PMPI_Finalize();
  pthread_t thread;
  pthread_create(&thread, NULL, fault, NULL);
  pthread_join(thread, NULL);
  return rc;
}
