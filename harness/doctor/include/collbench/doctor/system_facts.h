// A host's facts as /sys and /proc show them: NVIDIA GPUs and the driver, RDMA devices and their
// ports, which NIC each GPU is closest to, GPUDirect RDMA's prerequisites, memory limits, the
// instance type and NCCL's configuration files. Every path is read under a root directory ("/"
// on a real host), so tests point it at a fixture tree. A missing or malformed file leaves its
// fact unknown; nothing here throws for what a host lacks.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collbench/doctor/facts.h"

namespace collbench::doctor {

/// Where to read, and the two values NCCL itself takes from the process to find its
/// configuration files. They are parameters, not getenv, so tests choose them.
struct SystemPaths {
  std::filesystem::path root = "/";  ///< prefixes every path read
  std::string nccl_conf_file;        ///< $NCCL_CONF_FILE; "" when unset or empty
  /// The user's home directory as NCCL finds it: the passwd entry of the real user
  /// (getpwuid(getuid())->pw_dir), not $HOME. "" skips ~/.nccl.conf.
  std::string home;
};

/// The paths as this process's NCCL finds them: $NCCL_CONF_FILE and the real user's home
/// directory, read under `root`.
SystemPaths this_process_paths(std::filesystem::path root = "/");

/// Everything below, in one HostFacts: host (the kernel's hostname), instance_type,
/// driver_version, gpus, nics, affinities, gpudirect, memory, nccl_conf and nccl_conf_files.
/// libraries, fabric, env and ranks are the probes' to fill.
HostFacts read_system_facts(const SystemPaths& where);

/// NVIDIA display and 3D controllers on the PCI bus (vendor 0x10de, class 0x0300xx or
/// 0x0302xx), sorted by bus id, with their NUMA node and the model that
/// /proc/driver/nvidia/gpus/<bus id>/information names (source "procfs").
std::vector<GpuFact> read_gpus(const std::filesystem::path& root);

/// The driver's version from /proc/driver/nvidia/version ("550.127.05"); "" without a driver.
std::string read_driver_version(const std::filesystem::path& root);

/// The RDMA devices of /sys/class/infiniband, sorted by name, with their driver, kind, PCI
/// function, NUMA node and ports.
std::vector<NicFact> read_nics(const std::filesystem::path& root);

/// For each GPU, the NIC closest to it on the PCI tree (see pci_topology): below one PCIe
/// switch, else on one host bridge, else on one NUMA node, else across the system. Ties go to
/// the first NIC by name. A host without NICs gets one entry per GPU with nic "".
std::vector<GpuNicAffinity> read_affinities(const std::filesystem::path& root,
                                            std::span<const GpuFact> gpus,
                                            std::span<const NicFact> nics);

/// nvidia_peermem (or nv_peer_mem) loaded, the kernel release, NVIDIA's open kernel module,
/// and whether dma-buf can stand in for peermem (kernel 5.12 or later with the open module).
GpuDirectFact read_gpudirect(const std::filesystem::path& root);

/// RLIMIT_MEMLOCK from /proc/self/limits, huge pages from /proc/meminfo, transparent huge
/// pages' mode, and the size of /dev/shm.
MemoryFact read_memory(const std::filesystem::path& root);

/// The EC2 instance type from DMI's product name ("p5.48xlarge"); "" when the product name is
/// missing or is not shaped like an instance type ("DGX H100", "Standard PC").
std::string read_instance_type(const std::filesystem::path& root);

/// NCCL's configuration files as NCCL applies them.
struct NcclConf {
  std::map<std::string, std::string> values;  ///< the value each variable gets from the files
  std::vector<std::string> files;             ///< the files that exist, in the order read
};

/// NCCL reads $NCCL_CONF_FILE if set, else ~/.nccl.conf, then /etc/nccl.conf. Each line
/// NAME=value (a line starting with '#' is a comment) goes to setenv without overwriting, so
/// the environment wins, then the first file (and the first line within a file) that sets a
/// variable. Paths are reported as NCCL sees them, read under the root.
NcclConf read_nccl_conf(const SystemPaths& where);

/// The NUMA nodes that `cpus` belong to, from /sys/devices/system/node/node*/cpulist, sorted;
/// empty when the host does not say.
std::vector<int> numa_nodes_of(const std::filesystem::path& root, std::span<const int> cpus);

// ---- Text parsers, exposed for their tests --------------------------------------------------

/// "100 Gb/sec (4X EDR)" -> 100, "400 Gb/sec (4X NDR)" -> 400, "2.5 Gb/sec (1X SDR)" -> 2.5.
std::optional<double> parse_rate_gbps(std::string_view rate);

/// The version in /proc/driver/nvidia/version's text: the first token shaped like 550.127.05.
std::string parse_driver_version(std::string_view version_text);

/// "0-3,8,10-11" -> {0, 1, 2, 3, 8, 10, 11}; nullopt when malformed.
std::optional<std::vector<int>> parse_cpulist(std::string_view list);

/// The soft "Max locked memory" limit of a /proc/<pid>/limits text: nullopt inside when
/// unlimited; nullopt outside when the line is missing or malformed.
std::optional<std::optional<std::uint64_t>> parse_memlock(std::string_view limits_text);

/// "6.8.0-1015-aws" -> {6, 8}; nullopt when it does not start with two numbers.
std::optional<std::pair<int, int>> parse_kernel_version(std::string_view release);

}  // namespace collbench::doctor
