#include "ofi_select.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>

namespace collbench::ofi {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char ch) { return std::tolower(ch); });
  return out;
}

}  // namespace

std::vector<std::string> provider_layers(std::string_view provider) {
  std::vector<std::string> layers;
  std::size_t start = 0;
  while (start <= provider.size()) {
    const std::size_t end = std::min(provider.find(';', start), provider.size());
    if (end > start) layers.emplace_back(provider.substr(start, end - start));
    start = end + 1;
  }
  return layers;
}

bool host_local_provider(std::string_view provider) {
  for (const auto& layer : provider_layers(provider)) {
    if (layer == "shm" || layer == "sm2") return true;
  }
  return false;
}

bool usable(const Candidate& c, bool multi_host) {
  if (c.link_local) return false;
  if (multi_host && (c.loopback || host_local_provider(c.provider))) return false;
  return true;
}

bool ip_address(const Candidate& c) {
  return c.address_format == "ipv4" || c.address_format == "ipv6";
}

bool host_only_bridge(std::string_view domain) {
  return domain.starts_with("docker") || domain.starts_with("virbr");
}

namespace {

/// Lower is better: real interfaces, then a container or VM bridge (the same private subnet on
/// every host, so the same address on every host), then loopback.
int preference(const Candidate& c) {
  if (c.loopback) return 2;
  if (host_only_bridge(c.domain)) return 1;
  return 0;
}

}  // namespace

std::optional<std::size_t> choose(const std::vector<Candidate>& candidates, bool multi_host) {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (!usable(candidates[i], multi_host)) continue;
    if (!best || preference(candidates[i]) < preference(candidates[*best])) best = i;
  }
  return best;
}

std::optional<std::size_t> match(const std::vector<Candidate>& candidates, const Candidate& chosen,
                                 bool multi_host, int local_rank, int local_size) {
  // The usable candidates of rank 0's provider and address format, best preference only.
  std::vector<std::size_t> matching;
  int best = 3;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    if (c.provider != chosen.provider || c.address_format != chosen.address_format ||
        !usable(c, multi_host)) {
      continue;
    }
    if (preference(c) < best) {
      best = preference(c);
      matching.clear();
    }
    if (preference(c) == best) matching.push_back(i);
  }
  if (matching.empty()) return std::nullopt;

  // IP interfaces: one per host, in rank 0's subnet where the host has one. Several interfaces of
  // a host need not reach the same hosts, and traffic between subnets goes through a router.
  if (ip_address(chosen)) {
    for (std::size_t i : matching) {
      if (candidates[i].fabric == chosen.fabric) return i;
    }
    return matching.front();
  }

  // Fabric devices (EFA, InfiniBand): the host's ranks spread over them, evenly spaced in
  // libfabric's order (which follows the PCI topology), so that neighbouring ranks, usually on
  // neighbouring GPUs, do not share the devices behind one PCIe switch.
  std::vector<std::size_t> domains;
  std::set<std::string> seen;
  for (std::size_t i : matching) {
    if (seen.insert(candidates[i].domain).second) domains.push_back(i);
  }
  const std::size_t n = domains.size();
  const std::size_t r = static_cast<std::size_t>(std::max(local_rank, 0));
  const std::size_t size = static_cast<std::size_t>(std::max(local_size, 1));
  return domains[size <= n ? (r * n / size) % n : r % n];
}

std::optional<std::string> require_provider(std::string_view wanted, const Candidate& chosen) {
  const std::string w = lower(wanted);
  if (w == "libfabric" || w == "ofi") return std::nullopt;
  for (const auto& layer : provider_layers(chosen.provider)) {
    if (lower(layer) == w) return std::nullopt;
  }
  return fmt::format(
      "--require-net {}: libfabric selected the {} provider (fabric {}, domain {}), not {}; "
      "set FI_PROVIDER={} and check that `fi_info -p {}` lists it on every host",
      wanted, chosen.provider, chosen.fabric, chosen.domain, wanted, w, w);
}

std::string describe(const std::vector<Candidate>& candidates) {
  // Each provider/domain pair once, in libfabric's order.
  std::vector<std::string> seen;
  std::set<std::string> have;
  for (const auto& c : candidates) {
    std::string item = fmt::format("{} on {}", c.provider, c.domain);
    if (c.loopback) item += " (loopback)";
    if (have.insert(item).second) seen.push_back(std::move(item));
  }
  return seen.empty() ? std::string("none") : fmt::format("{}", fmt::join(seen, ", "));
}

}  // namespace collbench::ofi
