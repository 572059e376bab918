// Hosts for the rule, comparison and output tests: a clean AWS p5 node (8 H100, 32 EFA NICs,
// aws-ofi-nccl, GPUDirect over dma-buf, nothing set) and a clean InfiniBand node, which each test
// changes in the one way it is about.
#pragma once

#include <string>

#include "collbench/doctor/facts.h"

namespace collbench::doctor::testing {

inline LibraryFact library(std::string name, std::string version, std::string path) {
  LibraryFact l;
  l.name = std::move(name);
  l.found = true;
  l.version = std::move(version);
  l.path = std::move(path);
  return l;
}

inline LibraryFact missing_library(std::string name, std::string why) {
  LibraryFact l;
  l.name = std::move(name);
  l.details["error"] = std::move(why);
  return l;
}

inline NicFact nic(std::string name, NicKind kind, std::string state = "ACTIVE") {
  NicFact n;
  n.name = std::move(name);
  n.kind = kind;
  n.driver = kind == NicKind::kEfa ? "efa" : "mlx5_core";
  NicPort port;
  port.state = std::move(state);
  port.link_layer = kind == NicKind::kEfa ? "Unspecified" : "InfiniBand";
  port.rate_gbps = kind == NicKind::kEfa ? 100.0 : 400.0;
  n.ports.push_back(port);
  return n;
}

/// The net plugin fact of aws-ofi-nccl `version` registering `network`.
inline LibraryFact net_plugin(std::string version, std::string network = "Libfabric") {
  LibraryFact l =
      library("net_plugin", std::move(version), "/opt/amazon/ofi-nccl/lib/libnccl-net-ofi.so");
  l.details["network"] = std::move(network);
  l.details["interface"] = "v10";
  return l;
}

inline HostFacts efa_host(const std::string& name = "node1") {
  HostFacts h;
  h.host = name;
  h.instance_type = "p5.48xlarge";
  h.driver_version = "550.127.05";
  for (const char* bus : {"53", "64", "75", "86", "97", "a8", "b9", "ca"}) {
    GpuFact g;
    g.pci_bus_id = std::string("0000:") + bus + ":00.0";
    g.model = "NVIDIA H100 80GB HBM3";
    g.source = "nvml";
    h.gpus.push_back(g);
  }
  for (int i = 0; i < 32; ++i)
    h.nics.push_back(nic("rdmap" + std::to_string(i) + "s0", NicKind::kEfa));
  h.interfaces = {"docker0", "ens32", "lo"};
  h.libraries = {library("nccl", "2.28.9", "/usr/lib/libnccl.so.2"),
                 library("libfabric", "2.1.0amzn3.0", "/opt/amazon/efa/lib/libfabric.so.1"),
                 net_plugin("1.19.2")};
  h.fabric = FabricFact{{"efa", "shm", "tcp"}, 32};
  h.gpudirect.dmabuf = true;
  h.gpudirect.open_kernel_module = true;
  h.gpudirect.kernel = "6.8.0-1021-aws";
  h.memory.memlock_known = true;
  h.memory.transparent_hugepages = "madvise";
  h.ranks.push_back(RankFact{0, 0, {0, 1, 2, 3}, {0}});
  return h;
}

inline HostFacts ib_host(const std::string& name = "ib1") {
  HostFacts h = efa_host(name);
  h.instance_type = "";
  h.nics.clear();
  for (int i = 0; i < 8; ++i)
    h.nics.push_back(nic("mlx5_" + std::to_string(i), NicKind::kInfiniband));
  h.gpudirect.nvidia_peermem = true;
  h.libraries = {library("nccl", "2.28.9", "/usr/lib/libnccl.so.2")};
  h.fabric.reset();
  return h;
}

}  // namespace collbench::doctor::testing
