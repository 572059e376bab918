#include "collbench/doctor/library_checks.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace collbench::doctor {
namespace {

std::string detail(const LibraryFact& library, const std::string& key) {
  const auto it = library.details.find(key);
  return it == library.details.end() ? "" : it->second;
}

Finding make(std::string check, Severity severity, std::string message, const HostFacts& host,
             std::string reason = "", std::string source = "") {
  return Finding{std::move(check), severity,          std::move(message),
                 {host.host},      std::move(reason), std::move(source)};
}

}  // namespace

std::vector<Finding> library_findings(const HostFacts& host) {
  std::vector<Finding> out;
  const bool has_gpus = !host.gpus.empty();

  if (const LibraryFact* nccl = host.library("nccl")) {
    if (nccl->found) {
      out.push_back(make(
          "libraries.nccl", Severity::kOk,
          fmt::format("NCCL {} from {}", nccl->version.empty() ? "?" : nccl->version, nccl->path),
          host));
    } else if (has_gpus) {
      out.push_back(make("libraries.nccl", Severity::kFailure,
                         "NCCL (libnccl.so.2) is not on this host's library path", host,
                         "the NCCL backend and every NCCL program need it"));
    }
  }
  if (const LibraryFact* driver = host.library("cuda_driver"); driver && has_gpus) {
    if (!driver->found) {
      out.push_back(
          make("libraries.cuda_driver", Severity::kFailure,
               fmt::format("{} GPUs but no CUDA driver library (libcuda.so.1)", host.gpus.size()),
               host, "no CUDA program can use the GPUs"));
    }
  }
  if (const LibraryFact* plugin = host.library("net_plugin")) {
    const std::string error = detail(*plugin, "error");
    if (!error.empty()) {
      // A plugin file that exists but does not load (a missing libfabric, a wrong ABI): NCCL
      // logs it at INFO only and falls back to its internal networks.
      out.push_back(
          make("libraries.net_plugin_load", Severity::kFailure,
               fmt::format("NCCL's net plugin {} does not load: {}",
                           plugin->found ? plugin->path : detail(*plugin, "tried"), error),
               host,
               "NCCL then falls back to its internal IB or Socket network without an "
               "error",
               "NVIDIA/nccl src/plugin/plugin_open.cc"));
    }
  }

  // collbench's own libfabric and MPI against the cluster's copies: a build against the
  // distribution's libraries on a cluster measures TCP where the cluster's would use EFA.
  for (const char* name : {"libfabric", "mpi"}) {
    const LibraryFact* library = host.library(name);
    if (!library || !library->found || detail(*library, "loaded_cluster_copy") != "no") continue;
    const std::string copy = detail(*library, "cluster_copy");
    const bool fabric = std::string_view(name) == "libfabric";
    const std::string home = copy.substr(0, copy.find("/lib"));
    out.push_back(
        make(fmt::format("libraries.{}_not_the_clusters", name),
             fabric && host.nic_count(NicKind::kEfa) > 0 ? Severity::kFailure : Severity::kWarning,
             fmt::format("collbench loaded {} {} from {}, not the cluster's {}",
                         fabric ? "libfabric" : "MPI",
                         library->version.empty() ? "?" : library->version, library->path, copy),
             host,
             fmt::format("{}; rebuild collbench against the cluster's ({}={} cmake ..., README: "
                         "Building on a cluster)",
                         fabric ? "a libfabric other than the EFA installer's may lack the efa "
                                  "provider, and then the ofi backend and NCCL's plugin use TCP"
                                : "runs then use another MPI than the cluster's mpirun and its "
                                  "transports (EFA)",
                         fabric ? "LIBFABRIC_HOME" : "MPI_HOME", home)));
  }

  const int efa = host.nic_count(NicKind::kEfa);
  if (efa > 0 && host.fabric) {
    const LibraryFact* libfabric = host.library("libfabric");
    const std::string version = libfabric ? libfabric->version : "?";
    const auto& providers = host.fabric->providers;
    if (std::find(providers.begin(), providers.end(), "efa") == providers.end()) {
      out.push_back(make(
          "fabric.efa_provider", Severity::kFailure,
          fmt::format("{} EFA devices in /sys, but libfabric {} lists no efa provider "
                      "(providers: {})",
                      efa, version,
                      providers.empty() ? std::string("none")
                                        : fmt::format("{}", fmt::join(providers, ", "))),
          host,
          "aws-ofi-nccl needs libfabric's efa provider; without it NCCL uses TCP sockets. Use "
          "the libfabric of the EFA installer (/opt/amazon/efa) and leave FI_PROVIDER unset or "
          "efa",
          "https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa.html"));
    } else if (host.fabric->efa_domains < efa) {
      out.push_back(make("fabric.efa_domains", Severity::kWarning,
                         fmt::format("libfabric's efa provider reports {} devices of the {} in "
                                     "/sys",
                                     host.fabric->efa_domains, efa),
                         host, "the devices it does not report carry no NCCL traffic"));
    } else {
      out.push_back(make("fabric.efa_provider", Severity::kOk,
                         fmt::format("libfabric {} reports all {} EFA devices", version, efa),
                         host));
    }
  }
  return out;
}

}  // namespace collbench::doctor
