#include "ofi_select.h"

#include <algorithm>
#include <cctype>
#include <set>

#include <fmt/format.h>

namespace collbench::ofi {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char ch) { return std::tolower(ch); });
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

std::optional<std::size_t> choose(const std::vector<Candidate>& candidates, bool multi_host) {
  std::optional<std::size_t> loopback;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (!usable(candidates[i], multi_host)) continue;
    if (!candidates[i].loopback) return i;
    if (!loopback) loopback = i;
  }
  return loopback;
}

std::optional<std::size_t> match(const std::vector<Candidate>& candidates, const Candidate& chosen,
                                 bool multi_host, int local_rank) {
  // The first candidate of each distinct domain; loopback only where nothing else matches.
  std::vector<std::size_t> domains;
  for (const bool take_loopback : {false, true}) {
    std::set<std::string> seen;
    for (std::size_t i = 0; i < candidates.size(); ++i) {
      const Candidate& c = candidates[i];
      if (c.provider == chosen.provider && c.address_format == chosen.address_format && usable(c, multi_host) &&
          c.loopback == take_loopback && seen.insert(c.domain).second) {
        domains.push_back(i);
      }
    }
    if (!domains.empty()) break;
  }
  if (domains.empty()) return std::nullopt;
  return domains[static_cast<std::size_t>(std::max(local_rank, 0)) % domains.size()];
}

std::optional<std::string> require_provider(std::string_view wanted, const Candidate& chosen) {
  const std::string w = lower(wanted);
  if (w == "libfabric" || w == "ofi") return std::nullopt;
  for (const auto& layer : provider_layers(chosen.provider)) {
    if (lower(layer) == w) return std::nullopt;
  }
  return fmt::format("--require-net {}: libfabric selected the {} provider (fabric {}, domain {}), not {}; "
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
