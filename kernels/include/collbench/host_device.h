// Host memory as a Device: pattern fill and verification on the CPU, steady-clock timers.
// Used by host-memory backends (MPI, libfabric) and by tests.
#pragma once

#include <memory>

#include "collbench/device.h"

namespace collbench {

/// `ranks_on_host`: how many ranks share this host's memory (available_bytes() is this rank's
/// share of the host's available memory).
std::unique_ptr<Device> make_host_device(int ranks_on_host);

/// The host implementations of fill and verify, reusable by other devices' tests.
void host_fill(void* destination, const FillSpec& spec);
VerifyResult host_verify(const void* data, const VerifySpec& spec);

}  // namespace collbench
