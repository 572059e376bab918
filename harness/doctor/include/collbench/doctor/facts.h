// collbench doctor's facts: what one host has (GPUs, NICs, libraries, GPUDirect prerequisites,
// limits, topology, NCCL-related settings) as typed records. Each rank collects its host's facts
// (probes in bench/doctor read the libraries, system_facts.h reads /sys and /proc), the facts
// travel to rank 0 over the bootstrap in their one wire form, and checks.h turns them into
// findings. Unknown stays unknown: an optional left empty, never a guessed value.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/record.h"

namespace collbench::doctor {

/// One GPU, from NVML when the library is there, else from /sys and /proc/driver/nvidia.
struct GpuFact {
  std::string pci_bus_id;  ///< "0000:53:00.0", lower case, domain included
  std::string model;       ///< "NVIDIA H100 80GB HBM3"; "" when unknown
  std::optional<int> numa_node;
  std::optional<std::uint64_t> memory_bytes;
  std::optional<bool> ecc_enabled;  ///< NVML only
  std::optional<bool> persistence;  ///< persistence mode (NVML, or procfs "Persistence")
  std::optional<bool> mig_enabled;  ///< NVML only
  std::optional<int> sm_clock_mhz;  ///< current SM clock (NVML)
  std::optional<int> max_sm_clock_mhz;
  std::string source;  ///< "nvml" or "procfs": where model and the rest came from

  static constexpr auto fields() {
    using G = GpuFact;
    return std::tuple{Field{"pci_bus_id", &G::pci_bus_id},
                      Field{"model", &G::model},
                      Field{"numa_node", &G::numa_node},
                      Field{"memory_bytes", &G::memory_bytes},
                      Field{"ecc_enabled", &G::ecc_enabled},
                      Field{"persistence", &G::persistence},
                      Field{"mig_enabled", &G::mig_enabled},
                      Field{"sm_clock_mhz", &G::sm_clock_mhz},
                      Field{"max_sm_clock_mhz", &G::max_sm_clock_mhz},
                      Field{"source", &G::source}};
  }
};

/// What kind of RDMA device a NIC is.
enum class NicKind : unsigned char {
  kEfa,         ///< AWS Elastic Fabric Adapter (driver efa)
  kInfiniband,  ///< link layer InfiniBand
  kRoce,        ///< an RDMA device whose link layer is Ethernet
  kOther,
};
/// "efa", "infiniband", "roce", "other".
std::span<const std::string_view> enum_names(NicKind);

/// One port of an RDMA device (/sys/class/infiniband/<dev>/ports/<n>).
struct NicPort {
  int number = 1;
  std::string state;                ///< "ACTIVE", "DOWN", "INIT", ... (the word after "4: ")
  std::string link_layer;           ///< "InfiniBand", "Ethernet", "Unspecified" (EFA)
  std::optional<double> rate_gbps;  ///< from "rate": "100 Gb/sec (4X EDR)" -> 100

  static constexpr auto fields() {
    return std::tuple{Field{"number", &NicPort::number}, Field{"state", &NicPort::state},
                      Field{"link_layer", &NicPort::link_layer},
                      Field{"rate_gbps", &NicPort::rate_gbps}};
  }
};

/// One RDMA device (/sys/class/infiniband/<name>).
struct NicFact {
  std::string name;  ///< "rdmap79s0", "efa_0", "mlx5_0"
  NicKind kind = NicKind::kOther;
  std::string driver;      ///< "efa", "mlx5_core"; "" when unknown
  std::string pci_bus_id;  ///< "" when the device is not a PCI function
  std::optional<int> numa_node;
  std::vector<NicPort> ports;

  static constexpr auto fields() {
    using N = NicFact;
    return std::tuple{Field{"name", &N::name},           Field{"kind", &N::kind},
                      Field{"driver", &N::driver},       Field{"pci_bus_id", &N::pci_bus_id},
                      Field{"numa_node", &N::numa_node}, Field{"ports", &N::ports}};
  }
};

/// How close a GPU is to a NIC on the PCI tree (nvidia-smi topo's vocabulary, coarser).
enum class Closeness : unsigned char {
  kPcieSwitch,  ///< below one PCIe switch: GPUDirect traffic stays off the CPU (PIX/PXB)
  kHostBridge,  ///< same root complex / host bridge (PHB)
  kNumaNode,    ///< same NUMA node, different host bridges (NODE)
  kSystem,      ///< across NUMA nodes or sockets (SYS)
};
/// "pcie_switch", "host_bridge", "numa_node", "system".
std::span<const std::string_view> enum_names(Closeness);

/// The NIC closest to one GPU.
struct GpuNicAffinity {
  std::string gpu;  ///< the GPU's PCI bus id
  std::string nic;  ///< the closest NIC's name ("" when the host has none)
  Closeness closeness = Closeness::kSystem;

  static constexpr auto fields() {
    return std::tuple{Field{"gpu", &GpuNicAffinity::gpu}, Field{"nic", &GpuNicAffinity::nic},
                      Field{"closeness", &GpuNicAffinity::closeness}};
  }
};

/// A library the run would load, as this host resolves it.
struct LibraryFact {
  std::string name;  ///< "nccl", "cuda_runtime", "cuda_driver", "nvml", "libfabric", "net_plugin"
  bool found = false;
  std::string path;     ///< the file loaded; "" when not found
  std::string version;  ///< "2.28.9", "1.17.0"; "" when unknown
  /// What else the library says of itself: a net plugin's network name ("Libfabric", "AWS
  /// Libfabric", "IB") and interface version ("v8"); why it was not found.
  std::map<std::string, std::string> details;

  static constexpr auto fields() {
    using L = LibraryFact;
    return std::tuple{Field{"name", &L::name}, Field{"found", &L::found}, Field{"path", &L::path},
                      Field{"version", &L::version},
                      Field{"details", &L::details, Presence::kOmittedWhenEmpty}};
  }
};

/// libfabric's view of the fabric (fi_getinfo).
struct FabricFact {
  std::vector<std::string> providers;  ///< distinct provider names, sorted ("efa", "tcp", ...)
  int efa_domains = 0;                 ///< distinct domains the efa provider reports

  static constexpr auto fields() {
    return std::tuple{Field{"providers", &FabricFact::providers},
                      Field{"efa_domains", &FabricFact::efa_domains}};
  }
};

/// What GPUDirect RDMA (NIC reads and writes GPU memory directly) can rely on here.
struct GpuDirectFact {
  bool nvidia_peermem = false;  ///< the nvidia_peermem (or nv_peer_mem) module is loaded
  /// dma-buf: a kernel of 5.12 or later and NVIDIA's open kernel module, which export GPU
  /// memory as dma-buf (what libfabric's efa provider and NCCL use without peermem).
  bool dmabuf = false;
  std::string kernel;               ///< kernel release, "6.1.0-27-amd64"
  bool open_kernel_module = false;  ///< /proc/driver/nvidia/version names the open module

  static constexpr auto fields() {
    using D = GpuDirectFact;
    return std::tuple{Field{"nvidia_peermem", &D::nvidia_peermem}, Field{"dmabuf", &D::dmabuf},
                      Field{"kernel", &D::kernel},
                      Field{"open_kernel_module", &D::open_kernel_module}};
  }
};

/// Memory limits that registration and NCCL's shared memory run into.
struct MemoryFact {
  /// RLIMIT_MEMLOCK soft limit in bytes; nullopt when unlimited.
  std::optional<std::uint64_t> memlock_bytes;
  bool memlock_known = false;  ///< false: the limit could not be read
  std::uint64_t hugepages_total = 0;
  std::uint64_t hugepage_size_kb = 0;
  std::string transparent_hugepages;           ///< the selected mode: "always", "madvise", "never"
  std::optional<std::uint64_t> dev_shm_bytes;  ///< size of /dev/shm (NCCL's shared memory)

  static constexpr auto fields() {
    using M = MemoryFact;
    return std::tuple{Field{"memlock_bytes", &M::memlock_bytes},
                      Field{"memlock_known", &M::memlock_known},
                      Field{"hugepages_total", &M::hugepages_total},
                      Field{"hugepage_size_kb", &M::hugepage_size_kb},
                      Field{"transparent_hugepages", &M::transparent_hugepages},
                      Field{"dev_shm_bytes", &M::dev_shm_bytes}};
  }
};

/// One rank of the doctor's job: where it may run.
struct RankFact {
  int rank = 0;
  int local_rank = 0;
  std::vector<int> cpus;        ///< CPUs its affinity mask allows
  std::vector<int> numa_nodes;  ///< NUMA nodes those CPUs belong to

  static constexpr auto fields() {
    return std::tuple{Field{"rank", &RankFact::rank}, Field{"local_rank", &RankFact::local_rank},
                      Field{"cpus", &RankFact::cpus}, Field{"numa_nodes", &RankFact::numa_nodes}};
  }
};

/// Everything the doctor knows of one host.
struct HostFacts {
  std::string host;
  std::string instance_type;   ///< from DMI, "p5.48xlarge"; "" when unknown
  std::string driver_version;  ///< NVIDIA driver, "550.127.05"; "" without a driver
  std::vector<GpuFact> gpus;
  std::vector<NicFact> nics;
  /// IP interface names (/sys/class/net: "lo", "ens32", "docker0"), sorted; what
  /// NCCL_SOCKET_IFNAME selects from. Empty when unknown.
  std::vector<std::string> interfaces;
  std::vector<GpuNicAffinity> affinities;
  std::vector<LibraryFact> libraries;
  std::optional<FabricFact> fabric;  ///< nullopt: libfabric could not be asked
  GpuDirectFact gpudirect;
  MemoryFact memory;
  /// The process environment's NCCL_*, FI_*, OFI_NCCL_*, CUDA_VISIBLE_DEVICES and
  /// NVIDIA_VISIBLE_DEVICES values, with secrets left out.
  std::map<std::string, std::string> env;
  /// NCCL's configuration files (NCCL_CONF_FILE, else ~/.nccl.conf, then /etc/nccl.conf), as
  /// NCCL applies them: a variable set there counts unless the environment sets it.
  std::map<std::string, std::string> nccl_conf;
  std::vector<std::string> nccl_conf_files;  ///< the files read, in the order NCCL reads them
  std::vector<RankFact> ranks;               ///< the doctor's ranks on this host
  /// Where the host's text was not UTF-8 ("env.NCCL_DEBUG", "nccl_conf.NCCL_DEBUG"): kept as
  /// escaped bytes (\xNN) and reported, since text from the machine is untrusted.
  std::vector<std::string> not_utf8;

  static constexpr auto fields() {
    using H = HostFacts;
    return std::tuple{Field{"host", &H::host},
                      Field{"instance_type", &H::instance_type},
                      Field{"driver_version", &H::driver_version},
                      Field{"gpus", &H::gpus},
                      Field{"nics", &H::nics},
                      Field{"interfaces", &H::interfaces},
                      Field{"affinities", &H::affinities},
                      Field{"libraries", &H::libraries},
                      Field{"fabric", &H::fabric},
                      Field{"gpudirect", &H::gpudirect},
                      Field{"memory", &H::memory},
                      Field{"env", &H::env},
                      Field{"nccl_conf", &H::nccl_conf},
                      Field{"nccl_conf_files", &H::nccl_conf_files},
                      Field{"ranks", &H::ranks},
                      Field{"not_utf8", &H::not_utf8, Presence::kOmittedWhenEmpty}};
  }

  /// The library fact named `name`, or nullptr.
  const LibraryFact* library(std::string_view name) const;
  /// How many RDMA devices of `kind` the host has.
  int nic_count(NicKind kind) const;
  /// A setting as NCCL would see it: the environment's value, else the configuration files'.
  std::optional<std::string> setting(std::string_view name) const;
};

// ---- Findings -------------------------------------------------------------------------------

/// How bad a finding is. The doctor exits 1 when any finding is a failure, or, with --strict,
/// a warning.
enum class Severity : unsigned char { kOk, kInfo, kWarning, kFailure };
/// "ok", "info", "warning", "failure".
std::span<const std::string_view> enum_names(Severity);

/// One conclusion, e.g. "efa ports: 2 of 32 are DOWN on node3 (rdmap79s0, rdmap80s0)".
struct Finding {
  std::string check;  ///< stable id: "gpus.count", "env.NCCL_PROTO", "hosts.libraries.nccl"
  Severity severity = Severity::kOk;
  std::string message;             ///< one line, naming the values
  std::vector<std::string> hosts;  ///< the hosts it concerns; empty: every host
  std::string reason;              ///< why it matters ("" for plain facts)
  std::string source;              ///< where the rule comes from: a URL or "repo path"

  static constexpr auto fields() {
    using F = Finding;
    return std::tuple{Field{"check", &F::check},
                      Field{"severity", &F::severity},
                      Field{"message", &F::message},
                      Field{"hosts", &F::hosts},
                      Field{"reason", &F::reason, Presence::kOmittedWhenEmpty},
                      Field{"source", &F::source, Presence::kOmittedWhenEmpty}};
  }
};

}  // namespace collbench::doctor
