// Which libfabric provider and interface the ofi backend opens, decided without libfabric so the
// rules are unit-tested on any machine. Rank 0 chooses; every other rank opens the same provider
// over the same address family on its own host's interface.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "collbench/record.h"

namespace collbench::ofi {

/// One entry of fi_getinfo's answer, reduced to what the choice depends on.
struct Candidate {
  std::string provider;        ///< e.g. "efa", "tcp;ofi_rxm", "shm"
  std::string fabric;          ///< e.g. "efa-direct", "192.0.2.0/24"
  std::string domain;          ///< e.g. "rdmap16s27-rdm", "eth0"
  std::string address_format;  ///< "ipv4", "ipv6", "str", "efa", ...
  bool loopback = false;       ///< bound to 127.0.0.0/8 or ::1: other hosts cannot reach it
  bool link_local = false;     ///< fe80::/10: unusable without a scope id in the peer's address

  static constexpr auto fields() {
    return std::tuple{Field{"provider", &Candidate::provider},
                      Field{"fabric", &Candidate::fabric},
                      Field{"domain", &Candidate::domain},
                      Field{"address_format", &Candidate::address_format},
                      Field{"loopback", &Candidate::loopback},
                      Field{"link_local", &Candidate::link_local}};
  }
};

/// The provider names of a layered provider: "tcp;ofi_rxm" -> {"tcp", "ofi_rxm"}.
std::vector<std::string> provider_layers(std::string_view provider);

/// true for providers that only connect processes on one host (shared memory).
bool host_local_provider(std::string_view provider);

/// Whether a candidate can connect the job: across hosts a loopback address or a shared-memory
/// provider cannot; a link-local IPv6 address never can (peers get no scope id).
bool usable(const Candidate& c, bool multi_host);

/// true for IPv4 and IPv6 addresses (tcp, sockets, verbs through rxm over IPoIB).
bool ip_address(const Candidate& c);

/// Interfaces that look alike on every host and reach none of the others: container and VM
/// bridges (docker0, virbr0). As NCCL does by default, they are used only when nothing else is.
bool host_only_bridge(std::string_view domain);

/// The candidate rank 0 opens: the first usable one in libfabric's order of preference (which
/// honours FI_PROVIDER), a container bridge or loopback only when nothing else is usable.
/// nullopt when none is.
std::optional<std::size_t> choose(const std::vector<Candidate>& candidates, bool multi_host);

/// The candidate a rank opens to talk over rank 0's choice: a usable one with the same provider
/// and address format (its domain, the local interface, may have another name on this host),
/// preferred as choose() prefers. For IP addresses, the interface in rank 0's subnet (fabric)
/// where the host has one, else its first. Fabric devices (a p5 has 32 EFA devices) are shared
/// out among the host's ranks, evenly spaced: local rank r of s takes the (r*n/s)-th of n distinct
/// domains (r mod n when s > n), so local rank 0 opens what choose() picked.
std::optional<std::size_t> match(const std::vector<Candidate>& candidates, const Candidate& chosen,
                                 bool multi_host, int local_rank = 0, int local_size = 1);

/// Why the chosen provider is not the one --require-net names, or nullopt when it is. The name
/// matches any layer, case-insensitively ("efa", "tcp", "EFA"); "Libfabric" and "ofi" match any
/// provider, as they name the library itself.
std::optional<std::string> require_provider(std::string_view wanted, const Candidate& chosen);

/// One line listing the candidates (provider on domain), for error messages.
std::string describe(const std::vector<Candidate>& candidates);

}  // namespace collbench::ofi
