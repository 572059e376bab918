#include "nccl_log.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <regex>

#include "collbench/text.h"
#include "nccl_text.h"

namespace collbench::nccl {
namespace {

/// The transport family of a channel's "via ..." text.
std::string transport_family(std::string_view via) {
  if (via.starts_with("NET/")) return "NET";
  if (via.starts_with("direct shared memory")) return "SHM";  // NCCL 2.5 wording
  const std::size_t end = via.find_first_of("/ ");
  std::string family(via.substr(0, end));
  if (family == "COLLNET" || family == "CollNet") return "CollNet";
  return family;
}

/// "via NET/<name>/<dev>[(proxy)][/GDRDMA[(PCI)]][/Shared]": the name may hold spaces ("AWS
/// Libfabric") and ends at the first segment that starts with a digit (the device index).
void parse_net_channel(std::string_view via, LogFacts& f) {
  std::string_view rest = via.substr(4);
  std::vector<std::string_view> parts;
  while (true) {
    const std::size_t slash = rest.find('/');
    parts.push_back(rest.substr(0, slash));
    if (slash == std::string_view::npos) break;
    rest.remove_prefix(slash + 1);
  }
  std::size_t dev = 0;
  while (dev < parts.size() &&
         !(parts[dev].size() && std::isdigit(static_cast<unsigned char>(parts[dev][0]))))
    ++dev;
  std::string name;
  for (std::size_t i = 0; i < std::min(dev, parts.size()); ++i) {
    if (i) name += '/';
    name += parts[i];
  }
  bool gdr = false;
  for (std::size_t i = dev + 1; i < parts.size(); ++i) gdr = gdr || parts[i].starts_with("GDRDMA");
  f.transports.insert("NET");
  if (!name.empty()) f.channel_networks.insert(std::string(trim(name)));
  ++f.net_connections;
  if (gdr) ++f.gdr_connections;
}

/// Handles the message part of an INFO line (what follows "NCCL INFO ").
void parse_info(std::string_view m, LogFacts& f) {
  if (m.starts_with("NCCL version ")) {
    f.version = std::string(trim(m.substr(13)));
    return;
  }
  if (m.starts_with("Using network ")) {
    f.network = std::string(trim(m.substr(14)));
    return;
  }
  if (m.starts_with("Using internal Network ")) {  // NCCL 2.3 and 2.4
    f.network = std::string(trim(m.substr(23)));
    return;
  }
  if (m.starts_with("NET/Plugin")) {
    const std::size_t loaded = m.find("Loaded net plugin ");
    const std::size_t failed = m.find("Failed to initialize ");
    if (failed != std::string_view::npos) {
      // "NET/Plugin: Failed to initialize Libfabric (v9), falling back to internal implementation"
      std::string_view name = m.substr(failed + 21);
      name = name.substr(0, name.find(" (v"));
      f.net_plugin = fmt::format("internal ({} failed to initialise)", trim(name));
    } else if (loaded != std::string_view::npos) {
      std::string_view name = m.substr(loaded + 18);
      const std::size_t version = name.rfind(" (");
      if (version != std::string_view::npos) name = name.substr(0, version);
      f.net_plugin = std::string(trim(name));
    } else if (f.net_plugin.empty() && (m.find("No plugin found") != std::string_view::npos ||
                                        m.find("Could not find") != std::string_view::npos ||
                                        m.find("internal") != std::string_view::npos)) {
      f.net_plugin = "internal";
    }
    return;
  }
  // NCCL 2.28: "Assigned NET plugin IB to comm" (followed by "Using network IB").
  if (m.starts_with("Assigned NET plugin ") && f.network.empty()) {
    std::string_view name = m.substr(20);
    const std::size_t to = name.rfind(" to comm");
    f.network = std::string(trim(name.substr(0, to)));
    return;
  }
  // aws-ofi-nccl: "NET/OFI Selected Provider is efa (found 4 nics)" (older) or "Selected provider
  // is efa, fabric is efa-direct (found 32 nics)".
  if (const std::size_t p = find_nocase(m, "selected provider is "); p != std::string::npos) {
    std::string_view rest = m.substr(p + 21);
    const std::size_t end = rest.find_first_of(", ");
    f.provider = std::string(rest.substr(0, end));
    if (const std::size_t fab = find_nocase(rest, "fabric is "); fab != std::string::npos) {
      std::string_view fabric = rest.substr(fab + 10);
      f.fabric = std::string(fabric.substr(0, fabric.find_first_of(", ")));
    }
    if (const auto n = integer_after(rest, "(found")) f.nics = static_cast<int>(*n);
    return;
  }
  // NCCL's view of the job (2.12+; " MNNVL x" since 2.19): "comm 0x55a7be5601c0 rank 0 nRanks 16
  // nNodes 2 localRanks 8 localRank 0 MNNVL 0".
  if (m.starts_with("comm ") && m.find(" nNodes ") != std::string_view::npos) {
    const auto set = [&](int& field, std::string_view word) {
      if (const auto v = integer_after(m, word)) field = static_cast<int>(*v);
    };
    set(f.nranks, "nRanks");
    set(f.nnodes, "nNodes");
    set(f.local_ranks, "localRanks");
    set(f.mnnvl, "MNNVL");
    return;
  }
  // Every version logs the size at init: "[[Rank 0] ]ncclCommInitRank[Config] comm 0x... rank 0
  // nranks 16 cudaDev 0 ... - Init START" (2.19: without the function name).
  if (m.find(" - Init START") != std::string_view::npos ||
      m.find(" - Init COMPLETE") != std::string_view::npos) {
    if (const auto v = integer_after(m, "nranks")) f.nranks = static_cast<int>(*v);
    return;
  }
  // NCCL after 2.28 says when ncclCommWindowRegister cannot make symmetric windows.
  static constexpr std::string_view kNoSymmetric = "Symmetric memory is not supported.";
  if (m.starts_with(kNoSymmetric)) {
    f.symmetric_unsupported = std::string(trim(m.substr(kNoSymmetric.size())));
    return;
  }
  // "NET/IB : Using [0]mlx5_0:1/IB [RO]; OOB eth0:10.0.0.1<0>", "NET/Socket : Using
  // [0]lo:127.0.0.1<0>"
  if (m.starts_with("NET/")) {
    const std::size_t using_at = m.find(": Using ");
    const std::size_t name_end = m.find_first_of(" :", 4);
    if (using_at != std::string_view::npos && name_end != std::string_view::npos &&
        name_end <= using_at) {
      f.net_devices[std::string(m.substr(4, name_end - 4))] =
          std::string(trim(m.substr(using_at + 8)));
    }
    return;
  }
  // Connection lines: "Channel 00/0 : 0[0] -> 1[0] [send] via NET/Socket/0", older "Ring 00 : ...".
  if (m.starts_with("Channel ") || m.starts_with("Ring ")) {
    const std::size_t via = m.find(" via ");
    if (via == std::string_view::npos) return;  // ring order lines ("Channel 00/32 :    0   1")
    const std::string_view transport = trim(m.substr(via + 5));
    if (transport.starts_with("NET/")) {
      parse_net_channel(transport, f);
    } else {
      f.transports.insert(transport_family(transport));
    }
    return;
  }
  if (m.starts_with("Connected all rings")) {
    static const std::regex gdr(R"(GDR (\d+))");
    std::cmatch match;
    const std::string text(m);
    if (std::regex_search(text.c_str(), match, gdr)) f.gdr_summary = std::stoi(match[1].str());
  }
}

}  // namespace

std::string LogFacts::used_network() const {
  if (!channel_networks.empty()) return fmt::format("{}", fmt::join(channel_networks, ","));
  return network;
}

void parse_line(std::string_view line, LogFacts& f) {
  line = trim(line);
  if (line.empty()) return;
  // Launchers may prefix lines ("[1,0]<stdout>:"); NCCL may prefix a timestamp. The level marker
  // is the anchor.
  static constexpr std::string_view kInfo = "NCCL INFO ";
  static constexpr std::string_view kWarn = "NCCL WARN ";
  if (const std::size_t at = line.find(kInfo); at != std::string_view::npos) {
    ++f.lines;
    parse_info(trim(line.substr(at + kInfo.size())), f);
    return;
  }
  if (const std::size_t at = line.find(kWarn); at != std::string_view::npos) {
    ++f.lines;
    f.warnings.emplace_back(trim(line.substr(at + kWarn.size())));
    return;
  }
  // With NCCL_DEBUG=VERSION (and in some releases always) the banner is a bare line.
  if (const std::size_t at = line.find("NCCL version "); at != std::string_view::npos) {
    ++f.lines;
    const std::string_view rest = line.substr(at + 13);
    f.version = std::string(rest.substr(0, rest.find(' ')));
    return;
  }
  if (line.find("NCCL TRACE ") != std::string_view::npos ||
      line.find("NCCL CALL ") != std::string_view::npos) {
    ++f.lines;
  }
}

LogFacts parse_log(std::string_view text) {
  LogFacts facts;
  for_each_line(text, [&](std::string_view line) { parse_line(line, facts); });
  return facts;
}

std::string gdr_state(const LogFacts& f) {
  if (f.net_connections == 0) return "n/a";
  if (f.gdr_connections == f.net_connections) return "yes";
  if (f.gdr_connections > 0) return "partial";
  return "no";
}

RankNetwork summarize(const LogFacts& facts, bool captured) {
  RankNetwork r;
  r.captured = captured;
  r.uses_network = facts.uses_network();
  r.network = facts.used_network();
  r.provider = facts.provider;
  r.gdr = gdr_state(facts);
  return r;
}

std::string rank_list(const std::vector<int>& ranks) {
  std::vector<int> sorted = ranks;
  std::sort(sorted.begin(), sorted.end());
  std::string out;
  for (std::size_t i = 0; i < sorted.size();) {
    std::size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    if (!out.empty()) out += ',';
    out += j > i ? fmt::format("{}-{}", sorted[i], sorted[j]) : fmt::format("{}", sorted[i]);
    i = j + 1;
  }
  return out;
}

NetworkFacts network_facts(const LogFacts& f, const std::vector<RankNetwork>& ranks) {
  NetworkFacts out;
  std::map<std::string, std::string>& facts = out.network;
  const std::string used = f.used_network();
  facts["net"] = !used.empty() ? used : (f.lines ? "unknown" : "unknown (NCCL log not captured)");
  if (!f.network.empty() && f.network != used) facts["selected"] = f.network;
  facts["gdr"] = gdr_state(f);
  if (!f.uses_network()) {
    // Rank 0 may reach its peers without the network while other ranks use it.
    for (const auto& r : ranks) {
      if (r.uses_network) {
        facts["gdr"] = r.gdr;
        facts["net"] = r.network;
        break;
      }
    }
  }
  if (f.gdr_summary >= 0) facts["gdr_reported"] = f.gdr_summary ? "yes" : "no";
  if (!f.provider.empty()) facts["provider"] = f.provider;
  if (!f.fabric.empty()) facts["fabric"] = f.fabric;
  if (f.nics >= 0) facts["nics"] = std::to_string(f.nics);
  if (!f.net_plugin.empty()) facts["plugin"] = f.net_plugin;
  // The devices of the network the channels use (else of the selected one).
  for (const std::string& name :
       {f.channel_networks.empty() ? std::string() : *f.channel_networks.begin(), f.network}) {
    const auto it = f.net_devices.find(name);
    if (it != f.net_devices.end()) {
      facts["devices"] = it->second;
      break;
    }
  }
  if (f.nnodes >= 0) facts["nccl_nodes"] = std::to_string(f.nnodes);
  if (f.local_ranks >= 0) facts["nccl_local_ranks"] = std::to_string(f.local_ranks);
  facts["transports"] =
      f.transports.empty() ? "none" : fmt::format("{}", fmt::join(f.transports, ","));
  int using_net = 0;
  for (const auto& r : ranks) using_net += r.uses_network ? 1 : 0;
  facts["used"] = using_net > 0 ? "yes" : "no";
  facts["ranks_using_network"] = fmt::format("{} of {}", using_net, ranks.size());
  out.nccl_build = f.version;
  return out;
}

}  // namespace collbench::nccl
