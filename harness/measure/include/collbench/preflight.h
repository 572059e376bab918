// Checks before anything is measured or written (exit 2 on every rank alike).
#pragma once

#include <cstdint>
#include <vector>

#include "collbench/backend.h"
#include "collbench/bootstrap.h"
#include "collbench/cli.h"
#include "collbench/collective.h"

namespace collbench {

/// Checks, before any output is opened, what would otherwise fail mid-run: an explicitly
/// requested dtype/op the backend cannot run, counts beyond the backend's per-call limit, and
/// buffers that do not fit in memory. Collective: when one rank lacks memory every rank throws
/// Error(kUsage), and rank 0's message names the host and an -e that fits.
void preflight(const Options& options, Bootstrap& bootstrap, Backend& backend,
               const std::vector<const CollectiveSpec*>& tests);

/// Largest send and receive buffers (bytes) the run needs on one rank.
struct BufferNeeds {
  std::uint64_t send_bytes = 0;
  std::uint64_t recv_bytes = 0;
};
BufferNeeds buffer_needs(const Options& options, const std::vector<const CollectiveSpec*>& tests,
                         int nranks);

}  // namespace collbench
