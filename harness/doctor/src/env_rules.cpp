#include "collbench/doctor/env_rules.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <set>

#include "collbench/text.h"

namespace collbench::doctor {

namespace {

// ---- Sources ------------------------------------------------------------------------------

constexpr std::string_view kEfaCheatsheet = "aws/aws-ofi-nccl doc/efa-env-var.md";
constexpr std::string_view kPluginRename = "https://github.com/aws/aws-ofi-nccl/pull/530";
constexpr std::string_view kAwsEfaNccl =
    "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa-start-nccl.html";
constexpr std::string_view kAwsOfiNccl = "https://github.com/aws/aws-ofi-nccl";
constexpr std::string_view kCudaEnv =
    "https://docs.nvidia.com/cuda/cuda-c-programming-guide/index.html#cuda-environment-variables";
#define COLLBENCH_NCCL_ENV "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html"

// ---- What a host is -----------------------------------------------------------------------

bool is_efa_host(const HostFacts& h) { return h.nic_count(NicKind::kEfa) > 0; }
bool has_ib_or_roce(const HostFacts& h) {
  return h.nic_count(NicKind::kInfiniband) + h.nic_count(NicKind::kRoce) > 0;
}

/// GPUs, an RDMA NIC, and a way for that NIC to reach GPU memory (peermem or dma-buf).
bool gpudirect_capable(const HostFacts& h) {
  const bool rdma_nic = is_efa_host(h) || has_ib_or_roce(h);
  return rdma_nic && !h.gpus.empty() && (h.gpudirect.nvidia_peermem || h.gpudirect.dmabuf);
}

/// EFA with GPUDirect RDMA: the prerequisites, on an instance family that has it (p4 and later
/// P instances) or on one whose type is unknown.
bool efa_rdma_capable(const HostFacts& h) {
  if (!is_efa_host(h) || !gpudirect_capable(h)) return false;
  const std::string& type = h.instance_type;
  if (type.empty()) return true;
  return type.size() >= 2 && type[0] == 'p' && std::isdigit(static_cast<unsigned char>(type[1])) &&
         type[1] >= '4';
}

const LibraryFact* found_library(const HostFacts& h, std::string_view name) {
  const LibraryFact* library = h.library(name);
  return library && library->found ? library : nullptr;
}

std::string plugin_network(const LibraryFact& plugin) {
  const auto it = plugin.details.find("network");
  return it == plugin.details.end() ? std::string() : it->second;
}

/// The net plugin's version when it is found and its version is known, else "".
std::string plugin_version(const HostFacts& h) {
  const LibraryFact* plugin = found_library(h, "net_plugin");
  return plugin ? plugin->version : std::string();
}

// ---- Text ---------------------------------------------------------------------------------

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool iequals(std::string_view a, std::string_view b) { return lower(a) == lower(b); }

/// A boolean setting as libfabric and NCCL read it; nullopt for anything else.
std::optional<bool> flag(std::string_view value) {
  const std::string v = lower(trim(value));
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return false;
  return std::nullopt;
}

/// The settings (environment and nccl.conf together) whose names start with `prefix`, sorted.
std::vector<std::string> settings_with_prefix(const HostFacts& h, std::string_view prefix) {
  std::set<std::string> names;
  for (const auto* map : {&h.env, &h.nccl_conf}) {
    for (const auto& [name, value] : *map) {
      if (std::string_view(name).substr(0, prefix.size()) == prefix) names.insert(name);
    }
  }
  return {names.begin(), names.end()};
}

/// "A=1 (environment), B=2 (from /etc/nccl.conf)" for the settings of `names` that are set.
std::string describe_settings(const HostFacts& h, const std::vector<std::string>& names) {
  std::vector<std::string> parts;
  for (const auto& name : names) {
    if (h.setting(name)) parts.push_back(describe_setting(h, name));
  }
  return join(parts, ", ");
}

// ---- The rules' judges ----------------------------------------------------------------------

std::optional<Judgement> efa_device_rdma_not_needed(const HostFacts& h) {
  const auto value = h.setting("FI_EFA_USE_DEVICE_RDMA");
  const LibraryFact* libfabric = found_library(h, "libfabric");
  if (!value || flag(*value) != true || !libfabric) return std::nullopt;
  if (version_at_least(libfabric->version, "1.18") != true) return std::nullopt;
  return Judgement{Severity::kInfo,
                   describe_setting(h, "FI_EFA_USE_DEVICE_RDMA") +
                       " is not needed with libfabric " + libfabric->version +
                       ", which uses the device's RDMA by itself where the device has it"};
}

std::optional<Judgement> efa_device_rdma_disabled(const HostFacts& h) {
  const auto value = h.setting("FI_EFA_USE_DEVICE_RDMA");
  if (!value || flag(*value) != false || !efa_rdma_capable(h)) return std::nullopt;
  return Judgement{Severity::kWarning,
                   describe_setting(h, "FI_EFA_USE_DEVICE_RDMA") +
                       " turns off EFA's RDMA on a host that has GPUDirect RDMA: GPU buffers "
                       "then travel through host memory"};
}

/// FI_PROVIDER=efa and NCCL_PROTO=simple: needed only with aws-ofi-nccl 1.5.0 and older.
std::optional<Judgement> obsolete_for_new_plugin(const HostFacts& h, std::string_view name,
                                                 std::string_view needed_value,
                                                 std::string_view cost) {
  const auto value = h.setting(name);
  if (!value || !iequals(trim(*value), needed_value) || !is_efa_host(h)) return std::nullopt;
  const std::string version = plugin_version(h);
  if (version_at_least(version, "1.5.1") != true) return std::nullopt;
  return Judgement{Severity::kWarning, describe_setting(h, name) +
                                           " was needed only with aws-ofi-nccl 1.5.0 and older; "
                                           "the plugin here is " +
                                           version + std::string(cost)};
}

std::optional<Judgement> fi_provider_obsolete(const HostFacts& h) {
  return obsolete_for_new_plugin(h, "FI_PROVIDER", "efa",
                                 ", which chooses the efa provider by itself");
}

std::optional<Judgement> nccl_proto_simple_obsolete(const HostFacts& h) {
  return obsolete_for_new_plugin(
      h, "NCCL_PROTO", "simple",
      ", which sets it itself where the platform needs it; set by hand it turns off the LL and "
      "LL128 protocols and slows small messages");
}

std::optional<Judgement> pinned(const HostFacts& h, std::string_view name, std::string_view what) {
  if (!h.setting(name)) return std::nullopt;
  return Judgement{Severity::kWarning, describe_setting(h, name) + " restricts NCCL's choice of " +
                                           std::string(what) +
                                           ": the numbers are not those of NCCL's own choice"};
}

std::optional<Judgement> nccl_algo_pinned(const HostFacts& h) {
  return pinned(h, "NCCL_ALGO", "algorithm");
}

std::optional<Judgement> nccl_proto_pinned(const HostFacts& h) {
  const auto value = h.setting("NCCL_PROTO");
  // On EFA, NCCL_PROTO=simple is the old plugins' requirement: the rule on those speaks of it.
  if (value && iequals(trim(*value), "simple") && is_efa_host(h) && !plugin_version(h).empty()) {
    return std::nullopt;
  }
  return pinned(h, "NCCL_PROTO", "protocol");
}

std::optional<Judgement> nccl_ib_on_efa(const HostFacts& h) {
  if (!is_efa_host(h) || has_ib_or_roce(h)) return std::nullopt;
  const auto names = settings_with_prefix(h, "NCCL_IB_");
  if (names.empty()) return std::nullopt;
  return Judgement{Severity::kWarning,
                   describe_settings(h, names) + (names.size() == 1 ? " does" : " do") +
                       " nothing here: the NICs are EFA, which NCCL reaches through its net "
                       "plugin, not its InfiniBand transport"};
}

std::optional<Judgement> socket_ifname_no_match(const HostFacts& h) {
  const auto value = h.setting("NCCL_SOCKET_IFNAME");
  if (!value || h.interfaces.empty()) return std::nullopt;
  if (!socket_interfaces(*value, h.interfaces).empty()) return std::nullopt;
  return Judgement{Severity::kFailure, describe_setting(h, "NCCL_SOCKET_IFNAME") +
                                           " matches none of this host's interfaces (" +
                                           join(h.interfaces, ", ") +
                                           "): NCCL finds no socket interface to bootstrap over"};
}

std::optional<Judgement> nccl_net_unknown(const HostFacts& h) {
  const auto value = h.setting("NCCL_NET");
  if (!value) return std::nullopt;
  const std::string wanted(trim(*value));
  // NCCL's own networks: sockets always, its IB verbs transport where there is an IB or RoCE NIC.
  std::vector<std::string> networks;
  if (has_ib_or_roce(h)) networks.emplace_back("IB");
  networks.emplace_back("Socket");
  const LibraryFact* plugin = h.library("net_plugin");
  bool plugin_known = plugin && !plugin->found;
  if (plugin && plugin->found) {
    const std::string network = plugin_network(*plugin);
    plugin_known = !network.empty();
    if (plugin_known) networks.push_back(network);
    // aws-ofi-nccl 1.12 and later register "Libfabric", and rename themselves to "AWS Libfabric"
    // or "OFI" when NCCL_NET asks for those names.
    if (iequals(network, "Libfabric") && version_at_least(plugin->version, "1.12") == true) {
      networks.emplace_back("AWS Libfabric");
      networks.emplace_back("OFI");
    }
  }
  for (const auto& network : networks) {
    if (iequals(network, wanted)) return std::nullopt;
  }
  if (!plugin_known) return std::nullopt;  // the plugin's name is unknown: it may be that one
  return Judgement{Severity::kFailure, describe_setting(h, "NCCL_NET") +
                                           " names no network NCCL can load here (" +
                                           join(networks, ", ") + "): communicator creation fails"};
}

/// NCCL_NET naming one of NCCL's own networks (Socket, IB) on an EFA host whose plugin loads:
/// NCCL then never opens the plugin, and EFA carries nothing. The commonest way EFA goes unused.
std::optional<Judgement> nccl_net_bypasses_efa(const HostFacts& h) {
  const auto value = h.setting("NCCL_NET");
  if (!value || !is_efa_host(h) || !found_library(h, "net_plugin")) return std::nullopt;
  const std::string wanted(trim(*value));
  if (!iequals(wanted, "Socket") && !iequals(wanted, "IB")) return std::nullopt;
  return Judgement{Severity::kFailure,
                   describe_setting(h, "NCCL_NET") + " makes NCCL use its own " + wanted +
                       " transport and never the net plugin on this EFA host: " +
                       (iequals(wanted, "Socket") ? "every byte goes over TCP"
                                                  : "there is no InfiniBand device to use") +
                       "; unset NCCL_NET (or set it to Libfabric)"};
}

/// The providers an FI_PROVIDER value allows libfabric to use: "efa", "tcp;ofi_rxm,shm" (a list,
/// each a provider or a layered chain) or "^tcp,udp" (all but those).
bool fi_provider_allows(std::string_view value, std::string_view provider) {
  std::string_view list = trim(value);
  const bool excluding = !list.empty() && list.front() == '^';
  if (excluding) list.remove_prefix(1);
  bool named = false;
  for (const auto& entry : split(list, ',')) {
    for (const auto& part : split(entry, ';')) named = named || iequals(trim(part), provider);
  }
  return excluding ? !named : named;
}

/// FI_PROVIDER set so that libfabric may not use efa, on an EFA host: aws-ofi-nccl then finds no
/// EFA provider and NCCL falls back to TCP (or fails). The other common way EFA goes unused.
std::optional<Judgement> fi_provider_excludes_efa(const HostFacts& h) {
  const auto value = h.setting("FI_PROVIDER");
  if (!value || trim(*value).empty() || !is_efa_host(h)) return std::nullopt;
  if (fi_provider_allows(*value, "efa")) return std::nullopt;
  return Judgement{Severity::kFailure,
                   describe_setting(h, "FI_PROVIDER") +
                       " keeps libfabric from the efa provider on this EFA host: the net plugin "
                       "then runs over another provider (TCP) or fails; unset FI_PROVIDER"};
}

std::optional<Judgement> nccl_debug_verbose(const HostFacts& h) {
  const auto value = h.setting("NCCL_DEBUG");
  if (!value) return std::nullopt;
  const std::string level = lower(trim(*value));
  if (level != "info" && level != "trace") return std::nullopt;
  if (level == "info" && h.setting("NCCL_DEBUG_FILE")) {
    return Judgement{Severity::kInfo, describe_setting(h, "NCCL_DEBUG") +
                                          " logs to NCCL_DEBUG_FILE: communicator set-up is "
                                          "slower, timings of the operations are not affected"};
  }
  return Judgement{Severity::kWarning,
                   describe_setting(h, "NCCL_DEBUG") +
                       (level == "trace" ? " traces every call, costing time in what is measured"
                                         : " floods every rank's output and slows "
                                           "communicator set-up")};
}

std::optional<Judgement> net_plugin_missing_on_efa(const HostFacts& h) {
  const LibraryFact* plugin = h.library("net_plugin");
  if (!is_efa_host(h) || !plugin || plugin->found) return std::nullopt;
  std::string why;
  for (const auto& [key, value] : plugin->details) {
    why += (why.empty() ? " (" : "; ") + key + ": " + value;
  }
  if (!why.empty()) why += ")";
  return Judgement{Severity::kFailure, "no NCCL net plugin loads on this EFA host" + why +
                                           ": NCCL falls back to TCP sockets and EFA goes unused"};
}

std::optional<Judgement> net_plugin_not_libfabric(const HostFacts& h) {
  const LibraryFact* plugin = found_library(h, "net_plugin");
  if (!is_efa_host(h) || !plugin) return std::nullopt;
  const std::string network = plugin_network(*plugin);
  if (network.empty()) return std::nullopt;
  for (std::string_view ours : {"Libfabric", "AWS Libfabric", "OFI"}) {
    if (iequals(network, ours)) return std::nullopt;
  }
  return Judgement{Severity::kWarning,
                   "the net plugin " + (plugin->path.empty() ? std::string() : plugin->path + " ") +
                       "registers network \"" + network +
                       "\", not aws-ofi-nccl's Libfabric: it cannot drive EFA"};
}

std::optional<Judgement> gdr_level_disabled(const HostFacts& h) {
  const auto value = h.setting("NCCL_NET_GDR_LEVEL");
  if (!value || !gpudirect_capable(h)) return std::nullopt;
  const std::string level = lower(trim(*value));
  if (level != "loc" && level != "0") return std::nullopt;
  return Judgement{Severity::kWarning, describe_setting(h, "NCCL_NET_GDR_LEVEL") +
                                           " never uses GPUDirect RDMA, on a host that has it"};
}

std::optional<Judgement> disabled_transport(const HostFacts& h, std::string_view name,
                                            std::string_view what) {
  const auto value = h.setting(name);
  if (!value || flag(*value) != true) return std::nullopt;
  return Judgement{Severity::kWarning, describe_setting(h, name) + " " + std::string(what)};
}

std::optional<Judgement> p2p_disabled(const HostFacts& h) {
  return disabled_transport(h, "NCCL_P2P_DISABLE",
                            "turns off GPU to GPU transfers over NVLink and PCIe: traffic within "
                            "the node goes through host memory");
}

std::optional<Judgement> shm_disabled(const HostFacts& h) {
  return disabled_transport(
      h, "NCCL_SHM_DISABLE",
      "turns off the shared memory transport: where P2P is not possible, traffic within the node "
      "goes over the network");
}

std::optional<Judgement> ib_disabled_on_ib(const HostFacts& h) {
  if (!has_ib_or_roce(h)) return std::nullopt;
  return disabled_transport(h, "NCCL_IB_DISABLE",
                            "turns off NCCL's InfiniBand/RoCE transport on a host with such NICs: "
                            "NCCL falls back to TCP sockets");
}

std::optional<Judgement> cuda_visible_devices_hides(const HostFacts& h) {
  const auto value = h.setting("CUDA_VISIBLE_DEVICES");
  if (!value || h.gpus.empty()) return std::nullopt;
  const auto visible = split_nonempty(trim(*value), ',');
  if (visible.size() >= h.gpus.size()) return std::nullopt;
  return Judgement{Severity::kWarning, describe_setting(h, "CUDA_VISIBLE_DEVICES") + " shows " +
                                           std::to_string(visible.size()) + " of the host's " +
                                           std::to_string(h.gpus.size()) + " GPUs to CUDA"};
}

std::optional<Judgement> fork_safe_not_needed(const HostFacts& h) {
  if (!h.setting("FI_EFA_FORK_SAFE")) return std::nullopt;
  return Judgement{Severity::kInfo,
                   describe_setting(h, "FI_EFA_FORK_SAFE") +
                       " is not needed: aws-ofi-nccl sets it itself where libfabric needs it"};
}

std::optional<Judgement> efa_leave_defaults(const HostFacts& h) {
  if (!is_efa_host(h)) return std::nullopt;
  const std::string set = describe_settings(h, {"NCCL_BUFFSIZE", "NCCL_MIN_CHANNELS"});
  if (set.empty()) return std::nullopt;
  return Judgement{Severity::kInfo,
                   set +
                       ": on EFA the plugin's authors recommend leaving it to NCCL's "
                       "default"};
}

std::optional<Judgement> socket_tuning_on_efa(const HostFacts& h) {
  if (!is_efa_host(h) || !found_library(h, "net_plugin")) return std::nullopt;
  const std::string set = describe_settings(h, {"NCCL_NSOCKS_PERTHREAD", "NCCL_SOCKET_NTHREADS"});
  if (set.empty()) return std::nullopt;
  return Judgement{Severity::kInfo,
                   set +
                       ": socket transport tuning, which does not apply when EFA carries the "
                       "traffic"};
}

// ---- The table ----------------------------------------------------------------------------

const std::array kRules{
    EnvRule{"env.FI_EFA_USE_DEVICE_RDMA.not_needed",
            "libfabric 1.18 and later (with aws-ofi-nccl 1.7 and later) turn on EFA's RDMA by "
            "themselves; the setting is harmless but left over",
            kEfaCheatsheet, efa_device_rdma_not_needed},
    EnvRule{"env.FI_EFA_USE_DEVICE_RDMA.disabled",
            "GPUDirect RDMA over EFA lets the NIC read and write GPU memory; without it every "
            "transfer is staged through host memory",
            kEfaCheatsheet, efa_device_rdma_disabled},
    EnvRule{"env.FI_PROVIDER.obsolete",
            "FI_PROVIDER=efa is listed for aws-ofi-nccl 1.5.0 and older only; newer plugins "
            "select the provider themselves",
            kEfaCheatsheet, fi_provider_obsolete},
    EnvRule{"env.NCCL_PROTO.obsolete",
            "NCCL_PROTO=simple is listed for aws-ofi-nccl 1.5.0 and older only; newer plugins set "
            "it themselves only where the platform cannot deliver LL/LL128 safely",
            kEfaCheatsheet, nccl_proto_simple_obsolete},
    EnvRule{"env.NCCL_ALGO.pinned",
            "NCCL lists NCCL_ALGO among debugging settings not to keep in production: a fixed "
            "algorithm loses NCCL's per-size choice",
            COLLBENCH_NCCL_ENV "#nccl-algo", nccl_algo_pinned},
    EnvRule{"env.NCCL_PROTO.pinned",
            "NCCL lists NCCL_PROTO among debugging settings not to keep in production: a fixed "
            "protocol loses NCCL's per-size choice",
            COLLBENCH_NCCL_ENV "#nccl-proto", nccl_proto_pinned},
    EnvRule{"env.NCCL_IB.on_efa",
            "NCCL_IB_* settings configure NCCL's InfiniBand verbs transport; EFA traffic goes "
            "through the net plugin instead, so they are dead weight that hides the real set-up",
            COLLBENCH_NCCL_ENV, nccl_ib_on_efa},
    EnvRule{"env.NCCL_SOCKET_IFNAME.no_match",
            "NCCL bootstraps over the IP interfaces NCCL_SOCKET_IFNAME selects (prefixes, ^ to "
            "exclude, = for exact names); selecting none stops NCCL at start-up",
            COLLBENCH_NCCL_ENV "#nccl-socket-ifname", socket_ifname_no_match},
    EnvRule{"env.NCCL_NET.unknown",
            "NCCL_NET must name (case-insensitively) a loaded network: NCCL's IB or Socket, or the "
            "plugin's own name (aws-ofi-nccl: \"AWS Libfabric\" up to 1.11, \"Libfabric\" since, "
            "also answering to \"AWS Libfabric\" and \"OFI\")",
            COLLBENCH_NCCL_ENV "#nccl-net", nccl_net_unknown},
    EnvRule{"env.NCCL_NET.bypasses_efa",
            "NCCL_NET=Socket or IB selects one of NCCL's own transports, so NCCL never opens "
            "the net plugin that drives EFA",
            COLLBENCH_NCCL_ENV "#nccl-net", nccl_net_bypasses_efa},
    EnvRule{"env.FI_PROVIDER.excludes_efa",
            "FI_PROVIDER restricts libfabric to the providers it names (or, with ^, to all but "
            "those); one without efa leaves the EFA devices unused",
            kEfaCheatsheet, fi_provider_excludes_efa},
    EnvRule{"env.NCCL_DEBUG.verbose",
            "INFO logs every rank's set-up and TRACE every call; both cost time and bury the "
            "results in log lines",
            COLLBENCH_NCCL_ENV "#nccl-debug", nccl_debug_verbose},
    EnvRule{"net_plugin.missing",
            "NCCL reaches EFA only through the aws-ofi-nccl net plugin; without it NCCL uses its "
            "TCP socket transport",
            kAwsEfaNccl, net_plugin_missing_on_efa},
    EnvRule{"net_plugin.not_libfabric",
            "aws-ofi-nccl (network \"Libfabric\") is the plugin that drives EFA; another plugin "
            "loaded in its place leaves EFA unused",
            kAwsOfiNccl, net_plugin_not_libfabric},
    EnvRule{"env.NCCL_NET_GDR_LEVEL.disabled",
            "NCCL_NET_GDR_LEVEL=LOC (or 0) never uses GPUDirect RDMA between NIC and GPU",
            COLLBENCH_NCCL_ENV "#nccl-net-gdr-level-formerly-nccl-ib-gdr-level",
            gdr_level_disabled},
    EnvRule{"env.NCCL_P2P_DISABLE",
            "a debugging setting that removes NCCL's fastest intra-node path",
            COLLBENCH_NCCL_ENV "#nccl-p2p-disable", p2p_disabled},
    EnvRule{"env.NCCL_SHM_DISABLE", "a debugging setting that removes NCCL's shared memory path",
            COLLBENCH_NCCL_ENV "#nccl-shm-disable", shm_disabled},
    EnvRule{"env.NCCL_IB_DISABLE",
            "NCCL_IB_DISABLE makes NCCL fall back to IP sockets instead of InfiniBand/RoCE",
            COLLBENCH_NCCL_ENV "#nccl-ib-disable", ib_disabled_on_ib},
    EnvRule{"env.CUDA_VISIBLE_DEVICES.hides",
            "CUDA shows a process only the devices CUDA_VISIBLE_DEVICES lists; a benchmark that "
            "means to use the whole node then uses part of it",
            kCudaEnv, cuda_visible_devices_hides},
    EnvRule{"env.FI_EFA_FORK_SAFE.not_needed",
            "the plugin sets fork safety itself for the libfabric versions that need it",
            kEfaCheatsheet, fork_safe_not_needed},
    EnvRule{"env.efa.leave_default",
            "on EFA, NCCL_MIN_CHANNELS and NCCL_BUFFSIZE are best left at NCCL's defaults: more "
            "channels than needed split messages finer and starve EFA of data",
            kEfaCheatsheet, efa_leave_defaults},
    EnvRule{"env.efa.socket_tuning",
            "NCCL_SOCKET_NTHREADS and NCCL_NSOCKS_PERTHREAD tune NCCL's socket transport, which "
            "EFA traffic does not use",
            kEfaCheatsheet, socket_tuning_on_efa},
};

#undef COLLBENCH_NCCL_ENV

/// The leading numbers of a version: "v1.7.3-aws" -> {1, 7, 3}; "2.1.0amzn3.0" -> {2, 1, 0}.
std::vector<long> version_numbers(std::string_view version) {
  std::vector<long> numbers;
  std::size_t i = 0;
  if (i < version.size() && (version[i] == 'v' || version[i] == 'V')) ++i;
  while (i < version.size() && std::isdigit(static_cast<unsigned char>(version[i]))) {
    long n = 0;
    while (i < version.size() && std::isdigit(static_cast<unsigned char>(version[i]))) {
      n = std::min(n * 10 + (version[i] - '0'), 1'000'000'000L);
      ++i;
    }
    numbers.push_back(n);
    if (i + 1 < version.size() && version[i] == '.' &&
        std::isdigit(static_cast<unsigned char>(version[i + 1]))) {
      ++i;
    } else {
      break;
    }
  }
  return numbers;
}

}  // namespace

std::span<const EnvRule> env_rules() { return kRules; }

std::vector<Finding> env_findings(const HostFacts& host) {
  std::vector<Finding> findings;
  for (const EnvRule& rule : kRules) {
    auto judgement = rule.judge(host);
    if (!judgement) continue;
    findings.push_back(Finding{std::string(rule.id),
                               judgement->severity,
                               std::move(judgement->message),
                               {host.host},
                               std::string(rule.reason),
                               std::string(rule.source)});
  }
  return findings;
}

std::string setting_origin(const HostFacts& host, std::string_view name) {
  const std::string key(name);
  if (host.env.count(key)) return "environment";
  if (!host.nccl_conf.count(key)) return "";
  if (host.nccl_conf_files.empty()) return "nccl.conf";
  return join(host.nccl_conf_files, " or ");
}

std::string describe_setting(const HostFacts& host, std::string_view name) {
  const auto value = host.setting(name);
  if (!value) return std::string(name) + " unset";
  const std::string origin = setting_origin(host, name);
  return std::string(name) + "=" + *value +
         (origin == "environment" ? " (environment)" : " (from " + origin + ")");
}

std::vector<std::string> socket_interfaces(std::string_view spec,
                                           const std::vector<std::string>& interfaces) {
  std::string_view list = trim(spec);
  const bool exclude = !list.empty() && list.front() == '^';
  if (exclude) list.remove_prefix(1);
  const bool exact = !list.empty() && list.front() == '=';
  if (exact) list.remove_prefix(1);
  std::vector<std::string> names;
  for (const auto& entry : split_nonempty(list, ',')) {
    const std::string name = entry.substr(0, entry.find(':'));
    if (!name.empty()) names.push_back(name);
  }
  // An empty list selects every interface, as NCCL treats a list without entries.
  if (names.empty()) return interfaces;
  std::vector<std::string> chosen;
  for (const auto& interface : interfaces) {
    const bool listed = std::any_of(names.begin(), names.end(), [&](const std::string& name) {
      return exact ? interface == name : interface.compare(0, name.size(), name) == 0;
    });
    if (listed != exclude) chosen.push_back(interface);
  }
  return chosen;
}

std::optional<bool> version_at_least(std::string_view version, std::string_view minimum) {
  auto have = version_numbers(version);
  auto want = version_numbers(minimum);
  if (have.empty()) return std::nullopt;
  const std::size_t n = std::max(have.size(), want.size());
  have.resize(n, 0);
  want.resize(n, 0);
  return have >= want;
}

}  // namespace collbench::doctor
