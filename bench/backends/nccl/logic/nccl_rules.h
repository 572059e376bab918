// The NCCL backend's decisions that need neither CUDA nor NCCL: which GPU a rank uses, whether
// ranks collide on one GPU, whether NCCL's network satisfies --require-net, and which dtypes and
// operators a given NCCL version and GPU support. Unit-tested on machines without GPUs.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "collbench/backend.h"
#include "collbench/record.h"
#include "nccl_log.h"

namespace collbench::nccl {

/// The GPU a rank uses and why ("--device 0", "COLLBENCH_DEVICE=1", "local rank 2").
struct DeviceChoice {
  int ordinal = 0;
  std::string reason;
};

/// Precedence: --device (option_device >= 0), then the COLLBENCH_DEVICE environment variable
/// (env_device non-null), then nccl-tests' NCCL_TESTS_DEVICE (nccl_tests_device non-null: the
/// process's first GPU, so the process's `index_in_process`-th rank (-t, -g) uses the GPU that
/// many after it, as in nccl-tests, and with one rank per process every rank of a host uses
/// it), then the rank's index among the ranks on its host. Throws Error(kUsage) naming the
/// input and the fix when the ordinal is not a visible GPU.
DeviceChoice choose_device(int option_device, const char* env_device, int local_rank,
                           int local_size, int device_count, std::string_view host,
                           const char* nccl_tests_device = nullptr, int index_in_process = 0);

/// Where a rank's GPU is, as NCCL tells ranks apart: the host (NCCL_HOSTID when set, else the
/// host name) and the GPU's PCI bus id.
struct RankDevice {
  std::string host_id;
  std::string pci_bus_id;

  static constexpr auto fields() {
    return std::tuple{Field{"host_id", &RankDevice::host_id},
                      Field{"pci_bus_id", &RankDevice::pci_bus_id}};
  }
};

/// Two ranks on one GPU of one host: NCCL fails their initialisation ("Duplicate GPU detected").
/// Returns the message for the first collision, or nullopt.
std::optional<std::string> duplicate_device(const std::vector<RankDevice>& ranks);

/// Does the network a rank's NCCL selected satisfy `wanted`? Case-insensitive; a name matches
/// itself, the last word of the selected name ("Libfabric" matches "AWS Libfabric"), NCCL's
/// external variant ("IB" matches "IBext", "IBext_v8"), and for libfabric networks the provider
/// ("efa" matches Libfabric with provider efa).
bool network_matches(std::string_view wanted, const RankNetwork& rank);

/// --require-net: nullopt when every rank satisfies `wanted`, else one line naming what NCCL
/// selected on which ranks. "none" requires that no rank uses a network (one node or one rank);
/// any other name fails when no rank uses a network, since nothing then shows which network
/// inter-node traffic would take.
std::optional<std::string> require_network(std::string_view wanted,
                                           const std::vector<RankNetwork>& ranks);

/// NCCL_VERSION_CODE-style integer (22803) as "2.28.3".
std::string version_string(int code);
/// The inverse for NCCL's banner version: "2.28.3+cuda13.0" -> 22803; 0 when it is not one.
int version_code(std::string_view text);

/// Why NCCL `nccl_version` on a GPU of compute capability `cc` (major*10+minor) cannot run
/// `primitive` on `dtype` with `op` in a communicator of `nranks` ranks, or nullopt.
std::optional<std::string> unsupported_reason(Primitive primitive, DType dtype, ReduceOp op,
                                              int nccl_version, int cc, int nranks);

/// True for the primitives that apply a reduction operator.
bool reduces(Primitive primitive);

}  // namespace collbench::nccl
