// Facts about this program and the host it runs on, for run contexts, reports and campaigns.
#pragma once

#include <string>

namespace collbench {

/// collbench's own version, with the git commit it was built from.
std::string collbench_version();

/// The instance type of this host, from DMI (e.g. "p5.48xlarge"); empty when unknown.
std::string instance_type();

/// The EC2 instance id of this host ("i-0123456789abcdef0"), from DMI's board asset tag, where
/// Nitro instances publish it; empty elsewhere. Maps EC2's topology to the run's hosts.
std::string instance_id();

/// The CPU model of this host, from /proc/cpuinfo; empty when unknown.
std::string cpu_model();

}  // namespace collbench
