#include "collbench/doctor/hardware_checks.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <string>

namespace collbench::doctor {
namespace {

// Where the counts come from. AWS states P5 and P5e's 32 network cards; the EFA device counts
// of the other types are those torchx publishes for AWS (vpc.amazonaws.com/efa per instance).
constexpr std::string_view kP5Source =
    "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa-acc-inst-types.html";
constexpr std::string_view kCountsSource =
    "https://github.com/meta-pytorch/torchx/blob/main/torchx/specs/named_resources_aws.py";
constexpr std::string_view kPortsSource =
    "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting/"
    "networking_troubleshooting.html";
constexpr std::string_view kGpuDirectSource =
    "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html";
constexpr std::string_view kMemlockSource = "https://github.com/NVIDIA/nccl/issues/563";
constexpr std::string_view kTopologySource =
    "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html";  // NCCL_NET_GDR_LEVEL

constexpr std::array<std::string_view, 2> kA100_40{"A100", "40GB"};
constexpr std::array<std::string_view, 2> kA100_80{"A100", "80GB"};
constexpr std::array<std::string_view, 1> kH100{"H100"};
constexpr std::array<std::string_view, 1> kH200{"H200"};
constexpr std::array<std::string_view, 1> kA10G{"A10G"};

constexpr std::array kInstanceSpecs{
    InstanceSpec{"p4d.24xlarge", 8, kA100_40, 4, kCountsSource},
    InstanceSpec{"p4de.24xlarge", 8, kA100_80, 4, kCountsSource},
    InstanceSpec{"p5.48xlarge", 8, kH100, 32, kP5Source},
    InstanceSpec{"p5e.48xlarge", 8, kH200, 32, kP5Source},
    InstanceSpec{"p5en.48xlarge", 8, kH200, 16, kCountsSource},
    InstanceSpec{"g5.12xlarge", 4, kA10G, 1, kCountsSource},
    InstanceSpec{"g5.24xlarge", 4, kA10G, 1, kCountsSource},
    InstanceSpec{"g5.48xlarge", 8, kA10G, 1, kCountsSource},
};

std::vector<std::string> hosts_of(const HostFacts& facts) {
  if (facts.host.empty()) return {};
  return {facts.host};
}

Finding finding(const HostFacts& facts, std::string check, Severity severity, std::string message,
                std::string reason = "", std::string_view source = "") {
  return Finding{.check = std::move(check),
                 .severity = severity,
                 .message = std::move(message),
                 .hosts = hosts_of(facts),
                 .reason = std::move(reason),
                 .source = std::string(source)};
}

std::string host_label(const HostFacts& facts) {
  return facts.host.empty() ? "this host" : facts.host;
}

/// "1.5" stays "1.5", "100.0" prints "100".
std::string gbps(double rate) { return fmt::format("{:g}", rate); }

bool is_rdma(const NicFact& nic) {
  return nic.kind == NicKind::kEfa || nic.kind == NicKind::kInfiniband ||
         nic.kind == NicKind::kRoce;
}

std::string kind_label(NicKind kind) {
  switch (kind) {
    case NicKind::kEfa:
      return "EFA";
    case NicKind::kInfiniband:
      return "InfiniBand";
    case NicKind::kRoce:
      return "RoCE";
    case NicKind::kOther:
      break;
  }
  return "other RDMA";
}

/// "8 × NVIDIA H100 80GB HBM3, driver 550.127.05; 32 EFA devices, all ports ACTIVE at 100 Gb/s"
Finding summary(const HostFacts& facts) {
  std::map<std::string, int> models;
  for (const auto& gpu : facts.gpus) ++models[gpu.model.empty() ? "unknown model" : gpu.model];
  std::vector<std::string> gpu_parts;
  for (const auto& [model, count] : models)
    gpu_parts.push_back(fmt::format("{} × {}", count, model));
  std::string text =
      gpu_parts.empty() ? "no NVIDIA GPU" : fmt::format("{}", fmt::join(gpu_parts, ", "));
  if (!facts.driver_version.empty()) text += fmt::format(", driver {}", facts.driver_version);

  std::map<NicKind, std::vector<const NicFact*>> by_kind;
  for (const auto& nic : facts.nics) by_kind[nic.kind].push_back(&nic);
  std::vector<std::string> nic_parts;
  for (const auto& [kind, nics] : by_kind) {
    int ports = 0;
    int active = 0;
    std::set<double> rates;
    for (const auto* nic : nics) {
      for (const auto& port : nic->ports) {
        ++ports;
        if (port.state == "ACTIVE") ++active;
        if (port.rate_gbps) rates.insert(*port.rate_gbps);
      }
    }
    std::vector<std::string> rate_texts;
    for (const double rate : rates) rate_texts.push_back(gbps(rate));
    std::string part =
        fmt::format("{} {} device{}, {} of {} port{} ACTIVE", nics.size(), kind_label(kind),
                    nics.size() == 1 ? "" : "s", active, ports, ports == 1 ? "" : "s");
    if (!rate_texts.empty()) part += fmt::format(" at {} Gb/s", fmt::join(rate_texts, "/"));
    nic_parts.push_back(std::move(part));
  }
  text += "; ";
  text += nic_parts.empty() ? "no RDMA device" : fmt::format("{}", fmt::join(nic_parts, "; "));
  if (!facts.instance_type.empty()) text = fmt::format("{}: {}", facts.instance_type, text);
  return finding(facts, "host.summary", Severity::kOk, std::move(text));
}

void check_driver(const HostFacts& facts, std::vector<Finding>& out) {
  if (facts.gpus.empty() || !facts.driver_version.empty()) return;
  out.push_back(finding(
      facts, "gpus.driver", Severity::kFailure,
      fmt::format("{} NVIDIA GPU{} on {} but no driver version (/proc/driver/nvidia/version)",
                  facts.gpus.size(), facts.gpus.size() == 1 ? "" : "s", host_label(facts)),
      "without the NVIDIA kernel driver loaded no CUDA program, and so no collective, can run"));
}

void check_instance(const HostFacts& facts, std::vector<Finding>& out) {
  const InstanceSpec* spec = find_instance_spec(facts.instance_type);
  if (spec == nullptr) return;
  const int gpus = static_cast<int>(facts.gpus.size());
  if (gpus < spec->gpus) {
    out.push_back(finding(
        facts, "instance.gpus", Severity::kFailure,
        fmt::format("{} has {} GPU{} where {} has {}", host_label(facts), gpus,
                    gpus == 1 ? "" : "s", spec->instance_type, spec->gpus),
        "a GPU missing from the PCI bus (fallen off, or held by another VM or container) leaves "
        "the job short of ranks or rebalances it onto fewer GPUs",
        spec->source));
  }
  std::vector<std::string> odd_models;
  for (const auto& gpu : facts.gpus) {
    if (gpu.model.empty()) continue;
    const bool fits = std::ranges::all_of(spec->model_words, [&](std::string_view word) {
      return gpu.model.find(word) != std::string::npos;
    });
    if (!fits) odd_models.push_back(fmt::format("{} ({})", gpu.pci_bus_id, gpu.model));
  }
  if (!odd_models.empty()) {
    out.push_back(finding(
        facts, "instance.gpu_model", Severity::kWarning,
        fmt::format("{} GPU{} on {} are not the {} of {}: {}", odd_models.size(),
                    odd_models.size() == 1 ? "" : "s", host_label(facts),
                    fmt::join(spec->model_words, " "), spec->instance_type,
                    fmt::join(odd_models, ", ")),
        "the instance type names other hardware than the host reports: the published reference "
        "figures for this type do not apply",
        spec->source));
  }
  const int efa = facts.nic_count(NicKind::kEfa);
  if (efa < spec->efa_devices) {
    out.push_back(finding(
        facts, "instance.efa", Severity::kFailure,
        fmt::format("{} has {} EFA device{} where {} has {}", host_label(facts), efa,
                    efa == 1 ? "" : "s", spec->instance_type, spec->efa_devices),
        "each EFA device missing takes its share of the instance's network bandwidth away; an "
        "instance launched without all its EFA interfaces runs collectives across hosts slower",
        spec->source));
  }
}

void check_ports(const HostFacts& facts, std::vector<Finding>& out) {
  std::vector<std::string> down;
  std::map<double, std::vector<std::string>> by_rate;
  int ports = 0;
  for (const auto& nic : facts.nics) {
    for (const auto& port : nic.ports) {
      ++ports;
      const std::string name =
          nic.ports.size() == 1 ? nic.name : fmt::format("{}/{}", nic.name, port.number);
      if (port.state != "ACTIVE") {
        down.push_back(fmt::format("{} {}", name, port.state.empty() ? "unknown" : port.state));
      }
      if (port.rate_gbps) by_rate[*port.rate_gbps].push_back(name);
    }
  }
  if (!down.empty()) {
    out.push_back(finding(
        facts, "nics.ports_down", Severity::kFailure,
        fmt::format("{} of {} RDMA port{} on {} are not ACTIVE: {}", down.size(), ports,
                    ports == 1 ? "" : "s", host_label(facts), fmt::join(down, ", ")),
        "NCCL and its net plugin skip or fail on devices whose port is not ACTIVE: the host "
        "runs with less bandwidth than its peers, or the job does not start",
        kPortsSource));
  }
  if (by_rate.size() > 1) {
    // The most common rate by count; the others by name, since they are the odd ones.
    const auto common = std::ranges::max_element(
        by_rate, {}, [](const auto& entry) { return entry.second.size(); });
    std::vector<std::string> groups;
    for (const auto& [rate, names] : by_rate) {
      groups.push_back(rate == common->first
                           ? fmt::format("{} at {} Gb/s", names.size(), gbps(rate))
                           : fmt::format("{} at {} Gb/s ({})", names.size(), gbps(rate),
                                         fmt::join(names, ", ")));
    }
    out.push_back(finding(
        facts, "nics.rates", Severity::kWarning,
        fmt::format("RDMA ports on {} run at different rates: {}", host_label(facts),
                    fmt::join(groups, "; ")),
        "a port that trained down to a lower rate (cable, transceiver) slows every ring or tree "
        "through it to its rate",
        kPortsSource));
  }
}

void check_gpudirect(const HostFacts& facts, std::vector<Finding>& out) {
  if (!std::ranges::any_of(facts.nics, is_rdma) || facts.gpus.empty()) return;
  const auto& gd = facts.gpudirect;
  if (!gd.nvidia_peermem && !gd.dmabuf) {
    out.push_back(finding(
        facts, "gpudirect.rdma", Severity::kFailure,
        fmt::format("GPUDirect RDMA is impossible on {}: nvidia_peermem is not loaded and "
                    "dma-buf needs the open kernel module on kernel 5.12+ (kernel {}, {} module)",
                    host_label(facts), gd.kernel.empty() ? "unknown" : gd.kernel,
                    gd.open_kernel_module ? "open" : "proprietary"),
        "without peermem or dma-buf the NIC cannot read or write GPU memory: NCCL stages every "
        "transfer through host memory, costing bandwidth and CPU",
        kGpuDirectSource));
    return;
  }
  std::vector<std::string> paths;
  if (gd.nvidia_peermem) paths.emplace_back("nvidia_peermem");
  if (gd.dmabuf) paths.emplace_back("dma-buf");
  out.push_back(
      finding(facts, "gpudirect.path", Severity::kInfo,
              fmt::format("GPUDirect RDMA on {} can use {} (kernel {})", host_label(facts),
                          fmt::join(paths, " and "), gd.kernel.empty() ? "unknown" : gd.kernel)));
}

void check_memlock(const HostFacts& facts, std::vector<Finding>& out) {
  const bool rdma = std::ranges::any_of(facts.nics, is_rdma);
  const auto& memory = facts.memory;
  if (!rdma || !memory.memlock_known || !memory.memlock_bytes) return;
  out.push_back(finding(
      facts, "memory.memlock", Severity::kWarning,
      fmt::format("locked memory is limited to {} KiB on {} while it has {} RDMA device{}",
                  *memory.memlock_bytes / 1024, host_label(facts), facts.nics.size(),
                  facts.nics.size() == 1 ? "" : "s"),
      "registering buffers with an RDMA device pins them; under a memlock limit registration "
      "fails (\"Unable to register memory ... Cannot allocate memory\"). Set it unlimited "
      "(ulimit -l unlimited, or the launcher's or container's memlock limit)",
      kMemlockSource));
}

void check_topology(const HostFacts& facts, std::vector<Finding>& out) {
  const auto rdma_nics = std::ranges::count_if(facts.nics, is_rdma);
  if (rdma_nics == 0) return;
  std::vector<std::string> far;
  for (const auto& affinity : facts.affinities) {
    if (affinity.closeness == Closeness::kSystem && !affinity.nic.empty()) {
      far.push_back(fmt::format("{} (nearest {})", affinity.gpu, affinity.nic));
    }
  }
  if (far.empty()) return;
  // One NIC cannot be near every GPU of a two-socket host: a fact of the instance, not a fault.
  const bool single = rdma_nics == 1;
  out.push_back(finding(
      facts, "topology.gpu_nic", single ? Severity::kInfo : Severity::kWarning,
      fmt::format("{} GPU{} on {} have no NIC nearer than across the system: {}", far.size(),
                  far.size() == 1 ? "" : "s", host_label(facts), fmt::join(far, ", ")),
      std::string(single ? "the host's only RDMA device sits on the other NUMA node for these "
                           "GPUs; "
                         : "") +
          "traffic between such a GPU and the network crosses the CPUs' interconnect, and by "
          "default NCCL does not use GPUDirect RDMA that far (NCCL_NET_GDR_LEVEL): it stages "
          "through host memory",
      kTopologySource));
}

void check_gpu_modes(const HostFacts& facts, std::vector<Finding>& out) {
  std::vector<std::string> ecc_off;
  std::vector<std::string> mig_on;
  std::vector<std::string> persistence_off;
  int ecc_known = 0;
  for (const auto& gpu : facts.gpus) {
    if (gpu.ecc_enabled) {
      ++ecc_known;
      if (!*gpu.ecc_enabled) ecc_off.push_back(gpu.pci_bus_id);
    }
    if (gpu.mig_enabled.value_or(false)) mig_on.push_back(gpu.pci_bus_id);
    if (gpu.persistence && !*gpu.persistence) persistence_off.push_back(gpu.pci_bus_id);
  }
  if (!ecc_off.empty()) {
    const bool all = static_cast<int>(ecc_off.size()) == ecc_known;
    out.push_back(finding(
        facts, "gpus.ecc", all ? Severity::kInfo : Severity::kWarning,
        fmt::format("ECC is off on {} of {} GPUs on {}: {}", ecc_off.size(), ecc_known,
                    host_label(facts), fmt::join(ecc_off, ", ")),
        all ? "ECC off gives a little more memory and bandwidth, and no protection against "
              "memory errors; hosts set up otherwise measure differently"
            : "GPUs of one host set up differently: the ones without ECC have a little more "
              "memory and bandwidth, so ranks are not alike"));
  }
  if (!mig_on.empty()) {
    out.push_back(finding(
        facts, "gpus.mig", Severity::kWarning,
        fmt::format("MIG mode is on for {} GPU{} on {}: {}", mig_on.size(),
                    mig_on.size() == 1 ? "" : "s", host_label(facts), fmt::join(mig_on, ", ")),
        "a MIG slice has a fraction of the GPU's SMs and memory bandwidth and no peer-to-peer "
        "access; collectives measured on it say nothing of the whole GPU"));
  }
  if (!persistence_off.empty()) {
    out.push_back(finding(
        facts, "gpus.persistence", Severity::kInfo,
        fmt::format("persistence mode is off for {} GPU{} on {}", persistence_off.size(),
                    persistence_off.size() == 1 ? "" : "s", host_label(facts)),
        "without persistence the driver tears the GPUs down when the last process exits and "
        "sets them up again at the next start, adding seconds to every job's start"));
  }
}

}  // namespace

std::span<const InstanceSpec> known_instance_types() { return kInstanceSpecs; }

const InstanceSpec* find_instance_spec(std::string_view instance_type) {
  for (const auto& spec : kInstanceSpecs) {
    if (spec.instance_type == instance_type) return &spec;
  }
  return nullptr;
}

// Text that was not UTF-8 (kept as \xNN escapes by the probe): worth knowing, since a setting
// with such bytes is not what its author meant, and NCCL reads it byte for byte.
void check_text(const HostFacts& facts, std::vector<Finding>& out) {
  if (facts.not_utf8.empty()) return;
  out.push_back(finding(
      facts, "host.text", Severity::kWarning,
      fmt::format("text that is not UTF-8, shown with its bytes escaped (\\xNN): {}",
                  fmt::join(facts.not_utf8, ", ")),
      "a file, the environment or a library gave bytes that are not text; a setting holding "
      "them is likely a typo or a damaged file"));
}

std::vector<Finding> hardware_findings(const HostFacts& facts) {
  std::vector<Finding> out;
  out.push_back(summary(facts));
  check_text(facts, out);
  check_driver(facts, out);
  check_instance(facts, out);
  check_ports(facts, out);
  check_gpudirect(facts, out);
  check_memlock(facts, out);
  check_topology(facts, out);
  check_gpu_modes(facts, out);
  return out;
}

}  // namespace collbench::doctor
