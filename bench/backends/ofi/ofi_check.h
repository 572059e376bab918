// OFI_CHECK: turns a negative libfabric return code into a collbench Error naming the call, file
// and line.
#pragma once

#include <rdma/fi_errno.h>

#include "collbench/error.h"

namespace collbench::ofi {

[[noreturn]] inline void fail(long long code, const char* call, const char* file, int line) {
  throw_runtime("{}:{}: {} failed: {} ({})", file, line, call, fi_strerror(static_cast<int>(-code)),
                code);
}

}  // namespace collbench::ofi

#define OFI_CHECK(call)                                                    \
  do {                                                                     \
    const long long collbench_ofi_rc = static_cast<long long>(call);       \
    if (collbench_ofi_rc < 0) {                                            \
      ::collbench::ofi::fail(collbench_ofi_rc, #call, __FILE__, __LINE__); \
    }                                                                      \
  } while (0)
