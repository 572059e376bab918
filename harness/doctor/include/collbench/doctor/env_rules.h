// collbench doctor's environment rules: NCCL, libfabric and net plugin settings judged against
// the host they run on and against what AWS and NVIDIA publish about them. Each rule is one row
// of a table (id, reason, source, judge); env_findings applies every row to one host. A setting
// is read as NCCL reads it (HostFacts::setting: the environment, else the nccl.conf files), and
// every message says where the value came from.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/doctor/facts.h"

namespace collbench::doctor {

/// What one rule concludes for one host.
struct Judgement {
  Severity severity = Severity::kWarning;
  std::string message;  ///< one line, naming the setting, its value and where it came from
};

/// One row of the rule table.
struct EnvRule {
  std::string_view id;      ///< the finding's check: "env.NCCL_PROTO.pinned"
  std::string_view reason;  ///< why it matters
  std::string_view source;  ///< a public URL, or "owner/repo path"
  /// The conclusion for this host; nullopt when the rule has nothing to say here.
  std::optional<Judgement> (*judge)(const HostFacts&);
};

/// Every rule, in the order env_findings applies them.
std::span<const EnvRule> env_rules();

/// The findings of every rule on one host (each naming that host).
std::vector<Finding> env_findings(const HostFacts& host);

/// Where the setting NCCL would see comes from: "environment", the nccl.conf file(s) read
/// ("/etc/nccl.conf"; several joined by " or " since the facts do not say which one set it), or
/// "" when it is unset.
std::string setting_origin(const HostFacts& host, std::string_view name);

/// "NAME=value (environment)" or "NAME=value (from /etc/nccl.conf)"; "NAME unset" when unset.
std::string describe_setting(const HostFacts& host, std::string_view name);

/// The interfaces of `interfaces` that NCCL_SOCKET_IFNAME=`spec` lets NCCL use, in NCCL's
/// grammar: a comma-separated list of name prefixes; a leading '^' excludes what the list
/// matches instead of selecting it; a leading '=' (after any '^') matches whole names only; an
/// entry's ":port" suffix is ignored (it selects a port, not an interface).
std::vector<std::string> socket_interfaces(std::string_view spec,
                                           const std::vector<std::string>& interfaces);

/// Whether `version` ("1.19.2", "v1.7.3-aws", "2.1.0amzn3.0") is at least `minimum` ("1.18"),
/// comparing the leading dot-separated numbers (missing ones count as 0); nullopt when
/// `version` starts with no number.
std::optional<bool> version_at_least(std::string_view version, std::string_view minimum);

}  // namespace collbench::doctor
