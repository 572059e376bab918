// MPI_CHECK: turns an MPI error code into a collbench Error naming the call, file and line.
#pragma once

#include <mpi.h>

#include "collbench/error.h"

namespace collbench::mpi {

[[noreturn]] inline void fail(int code, const char* call, const char* file, int line) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw_runtime("{}:{}: {} failed: {}", file, line, call, text);
}

}  // namespace collbench::mpi

#define MPI_CHECK(call)                                                    \
  do {                                                                     \
    const int collbench_mpi_rc = (call);                                   \
    if (collbench_mpi_rc != MPI_SUCCESS) {                                 \
      ::collbench::mpi::fail(collbench_mpi_rc, #call, __FILE__, __LINE__); \
    }                                                                      \
  } while (0)
