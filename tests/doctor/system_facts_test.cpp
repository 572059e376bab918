// The system facts as read from fixture trees of four hosts, and the parsers behind them.
#include "collbench/doctor/system_facts.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <set>

#include "fixture_tree.h"
#include "pci_topology.h"

namespace collbench::doctor {
namespace {

using testing::FixtureTree;
using testing::paths;

SystemPaths at(const FixtureTree& tree) { return paths(tree.root()); }

const GpuNicAffinity* affinity_of(const HostFacts& facts, std::string_view gpu) {
  for (const auto& affinity : facts.affinities) {
    if (affinity.gpu == gpu) return &affinity;
  }
  return nullptr;
}

// ---- Parsers --------------------------------------------------------------------------------

TEST(SystemParsers, RateInGbps) {
  EXPECT_EQ(parse_rate_gbps("100 Gb/sec (4X EDR)"), 100.0);
  EXPECT_EQ(parse_rate_gbps("400 Gb/sec (4X NDR)"), 400.0);
  EXPECT_EQ(parse_rate_gbps("2.5 Gb/sec (1X SDR)"), 2.5);
  EXPECT_EQ(parse_rate_gbps("200 Gb/sec"), 200.0);
  EXPECT_EQ(parse_rate_gbps(""), std::nullopt);
  EXPECT_EQ(parse_rate_gbps("fast"), std::nullopt);
  EXPECT_EQ(parse_rate_gbps("100 Mb/sec"), std::nullopt);
}

TEST(SystemParsers, DriverVersionOfBothModules) {
  EXPECT_EQ(parse_driver_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.127.05  "
                                 "Tue Oct  8 03:22:07 UTC 2024\nGCC version:  gcc 12.2.0\n"),
            "550.127.05");
  EXPECT_EQ(parse_driver_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  "
                                 "570.86.15  Release Build  (dvs-builder@U16-I3-B03-4-3)\n"),
            "570.86.15");
  EXPECT_EQ(parse_driver_version("NVRM version: NVIDIA UNIX aarch64 Kernel Module  535.104\n"),
            "535.104");
  EXPECT_EQ(parse_driver_version("garbage"), "");
  EXPECT_EQ(parse_driver_version(""), "");
}

TEST(SystemParsers, CpuList) {
  EXPECT_EQ(parse_cpulist("0-3,8,10-11\n"), (std::vector<int>{0, 1, 2, 3, 8, 10, 11}));
  EXPECT_EQ(parse_cpulist("5"), (std::vector<int>{5}));
  EXPECT_EQ(parse_cpulist(""), (std::vector<int>{}));
  EXPECT_EQ(parse_cpulist("3-1"), std::nullopt);
  EXPECT_EQ(parse_cpulist("a-b"), std::nullopt);
}

TEST(SystemParsers, MemlockUnlimitedOrBytes) {
  const auto unlimited = parse_memlock(
      "Limit                     Soft Limit           Hard Limit           Units\n"
      "Max locked memory         unlimited            unlimited            bytes\n");
  ASSERT_TRUE(unlimited.has_value());
  EXPECT_FALSE(unlimited->has_value());
  const auto limited =
      parse_memlock("Max locked memory         65536                65536                bytes\n");
  ASSERT_TRUE(limited.has_value());
  EXPECT_EQ(*limited, std::optional<std::uint64_t>(65536));
  EXPECT_FALSE(parse_memlock("Max open files 1024 1024 files\n").has_value());
  EXPECT_FALSE(parse_memlock("Max locked memory   lots   lots   bytes\n").has_value());
}

TEST(SystemParsers, KernelVersion) {
  EXPECT_EQ(parse_kernel_version("6.8.0-1015-aws"), (std::pair{6, 8}));
  EXPECT_EQ(parse_kernel_version("5.10.219-208.866.amzn2.x86_64"), (std::pair{5, 10}));
  EXPECT_EQ(parse_kernel_version("5.12"), (std::pair{5, 12}));
  EXPECT_EQ(parse_kernel_version("linux"), std::nullopt);
}

// ---- PCI topology ---------------------------------------------------------------------------

TEST(PciTopology, PlaceFromSysfsPath) {
  const auto place = parse_pci_place(
      "/sys/devices/pci0000:43/0000:43:01.1/0000:44:00.0/0000:45:00.0/0000:4F:00.0/infiniband/"
      "rdmap79s0");
  ASSERT_TRUE(place.has_value());
  EXPECT_EQ(place->host_bridge, "pci0000:43");
  EXPECT_EQ(place->chain, (std::vector<std::string>{"0000:43:01.1", "0000:44:00.0", "0000:45:00.0",
                                                    "0000:4f:00.0"}));
  EXPECT_FALSE(parse_pci_place("/sys/devices/virtual/net/lo").has_value());
  EXPECT_FALSE(parse_pci_place("/sys/devices/pci0000:00").has_value());
  EXPECT_FALSE(parse_pci_place("").has_value());
}

TEST(PciTopology, ClosenessLevels) {
  const auto place = [](std::string_view path, int numa) {
    auto p = parse_pci_place(path).value();
    p.numa_node = numa;
    return p;
  };
  const auto gpu =
      place("/sys/devices/pci0000:10/0000:10:01.0/0000:11:00.0/0000:12:01.0/0000:14:00.0", 0);
  const auto same_switch =
      place("/sys/devices/pci0000:10/0000:10:01.0/0000:11:00.0/0000:12:00.0/0000:13:00.0", 0);
  const auto other_port = place("/sys/devices/pci0000:10/0000:10:02.0/0000:20:00.0", 0);
  const auto other_bridge = place("/sys/devices/pci0000:30/0000:30:01.0/0000:31:00.0", 0);
  const auto other_node = place("/sys/devices/pci0000:80/0000:80:01.0/0000:81:00.0", 1);
  EXPECT_EQ(closeness(gpu, same_switch), Closeness::kPcieSwitch);
  EXPECT_EQ(closeness(gpu, other_port), Closeness::kHostBridge);
  EXPECT_EQ(closeness(gpu, other_bridge), Closeness::kNumaNode);
  EXPECT_EQ(closeness(gpu, other_node), Closeness::kSystem);
  auto unknown = other_bridge;
  unknown.numa_node.reset();
  EXPECT_EQ(closeness(gpu, unknown), Closeness::kSystem);
}

// ---- Hosts ----------------------------------------------------------------------------------

TEST(SystemFacts, P5) {
  const FixtureTree tree("p5");
  const HostFacts facts = read_system_facts(at(tree));
  EXPECT_EQ(facts.host, "p5-node1");
  EXPECT_EQ(facts.instance_type, "p5.48xlarge");
  EXPECT_EQ(facts.driver_version, "550.127.05");

  ASSERT_EQ(facts.gpus.size(), 8U);
  EXPECT_EQ(facts.gpus[0].pci_bus_id, "0000:53:00.0");
  EXPECT_EQ(facts.gpus[7].pci_bus_id, "0000:ca:00.0");
  for (const auto& gpu : facts.gpus) {
    EXPECT_EQ(gpu.model, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(gpu.source, "procfs");
  }
  EXPECT_EQ(facts.gpus[0].numa_node, 0);
  EXPECT_EQ(facts.gpus[7].numa_node, 1);

  ASSERT_EQ(facts.nics.size(), 32U);
  const auto rdmap79 = std::ranges::find(facts.nics, "rdmap79s0", &NicFact::name);
  ASSERT_NE(rdmap79, facts.nics.end());
  EXPECT_EQ(rdmap79->kind, NicKind::kEfa);
  EXPECT_EQ(rdmap79->driver, "efa");
  EXPECT_EQ(rdmap79->pci_bus_id, "0000:4f:00.0");
  EXPECT_EQ(rdmap79->numa_node, 0);
  for (const auto& nic : facts.nics) {
    EXPECT_EQ(nic.kind, NicKind::kEfa) << nic.name;
    ASSERT_EQ(nic.ports.size(), 1U) << nic.name;
    EXPECT_EQ(nic.ports[0].number, 1);
    EXPECT_EQ(nic.ports[0].state, "ACTIVE");
    EXPECT_EQ(nic.ports[0].link_layer, "Unknown");  // what sysfs prints for EFA's "unspecified"
    EXPECT_EQ(nic.ports[0].rate_gbps, 100.0);
  }

  // Each GPU shares its PCIe switch with four EFA devices; the first by name is its nearest.
  ASSERT_EQ(facts.affinities.size(), 8U);
  for (const auto& affinity : facts.affinities) {
    EXPECT_EQ(affinity.closeness, Closeness::kPcieSwitch) << affinity.gpu;
  }
  EXPECT_EQ(affinity_of(facts, "0000:53:00.0")->nic, "rdmap79s0");
  EXPECT_EQ(affinity_of(facts, "0000:ca:00.0")->nic, "rdmap198s0");

  EXPECT_TRUE(facts.gpudirect.nvidia_peermem);
  EXPECT_TRUE(facts.gpudirect.open_kernel_module);
  EXPECT_TRUE(facts.gpudirect.dmabuf);
  EXPECT_EQ(facts.gpudirect.kernel, "6.8.0-1015-aws");

  EXPECT_TRUE(facts.memory.memlock_known);
  EXPECT_FALSE(facts.memory.memlock_bytes.has_value());  // unlimited
  EXPECT_EQ(facts.memory.hugepages_total, 5128U);
  EXPECT_EQ(facts.memory.hugepage_size_kb, 2048U);
  EXPECT_EQ(facts.memory.transparent_hugepages, "madvise");
  EXPECT_TRUE(facts.memory.dev_shm_bytes.has_value());
}

TEST(SystemFacts, P4d) {
  const FixtureTree tree("p4d");
  const HostFacts facts = read_system_facts(at(tree));
  EXPECT_EQ(facts.instance_type, "p4d.24xlarge");
  EXPECT_EQ(facts.driver_version, "535.183.01");
  ASSERT_EQ(facts.gpus.size(), 8U);
  EXPECT_EQ(facts.gpus[0].model, "NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(facts.gpus[0].pci_bus_id, "0000:10:1c.0");
  ASSERT_EQ(facts.nics.size(), 4U);
  EXPECT_EQ(facts.nics[0].name, "rdmap144s27");  // sorted by name
  EXPECT_EQ(facts.nics[2].name, "rdmap16s27");
  EXPECT_EQ(facts.nics[2].pci_bus_id, "0000:10:1b.0");
  // GPUs and EFA devices sit directly on their host bridge's root bus.
  const auto* first = affinity_of(facts, "0000:10:1c.0");
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->nic, "rdmap16s27");
  EXPECT_EQ(first->closeness, Closeness::kHostBridge);
  EXPECT_EQ(affinity_of(facts, "0000:a0:1d.0")->nic, "rdmap160s27");
  EXPECT_TRUE(facts.gpudirect.nvidia_peermem);
  EXPECT_FALSE(facts.gpudirect.open_kernel_module);
  EXPECT_FALSE(facts.gpudirect.dmabuf);
}

TEST(SystemFacts, G5) {
  const FixtureTree tree("g5");
  const HostFacts facts = read_system_facts(at(tree));
  EXPECT_EQ(facts.instance_type, "g5.48xlarge");
  ASSERT_EQ(facts.gpus.size(), 8U);
  EXPECT_EQ(facts.gpus[0].model, "NVIDIA A10G");
  ASSERT_EQ(facts.nics.size(), 1U);
  EXPECT_EQ(facts.nics[0].name, "rdmap0s6");
  // The one EFA device is on the first host bridge: near the first four GPUs, across the system
  // from the other four.
  int host_bridge = 0;
  int system = 0;
  for (const auto& affinity : facts.affinities) {
    EXPECT_EQ(affinity.nic, "rdmap0s6");
    host_bridge += affinity.closeness == Closeness::kHostBridge ? 1 : 0;
    system += affinity.closeness == Closeness::kSystem ? 1 : 0;
  }
  EXPECT_EQ(host_bridge, 4);
  EXPECT_EQ(system, 4);
}

TEST(SystemFacts, InfinibandHost) {
  const FixtureTree tree("ib");
  const HostFacts facts = read_system_facts(at(tree));
  EXPECT_EQ(facts.instance_type, "");  // "DGX H100" is no EC2 instance type
  EXPECT_EQ(facts.host, "dgx-node1");
  // The four NVSwitches are NVIDIA functions too, but bridges, not GPUs.
  ASSERT_EQ(facts.gpus.size(), 8U);
  ASSERT_EQ(facts.nics.size(), 8U);
  for (const auto& nic : facts.nics) {
    EXPECT_EQ(nic.kind, NicKind::kInfiniband);
    EXPECT_EQ(nic.driver, "mlx5_core");
    ASSERT_EQ(nic.ports.size(), 1U);
    EXPECT_EQ(nic.ports[0].rate_gbps, 400.0);
    EXPECT_EQ(nic.ports[0].link_layer, "InfiniBand");
    EXPECT_EQ(nic.ports[0].state, "ACTIVE");
  }
  const auto* first = affinity_of(facts, "0000:1b:00.0");
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->nic, "mlx5_0");
  EXPECT_EQ(first->closeness, Closeness::kPcieSwitch);
  EXPECT_EQ(affinity_of(facts, "0000:df:00.0")->nic, "mlx5_11");
  EXPECT_TRUE(facts.gpudirect.nvidia_peermem);
  EXPECT_FALSE(facts.gpudirect.dmabuf);
}

TEST(SystemFacts, BrokenVariantsChangeTheFacts) {
  const FixtureTree tree("p5",
                         "--gpus 7 --nics 30 --port-down rdmap80s0 --no-peermem "
                         "--module proprietary --memlock-kib 64");
  const HostFacts facts = read_system_facts(at(tree));
  EXPECT_EQ(facts.gpus.size(), 7U);
  EXPECT_EQ(facts.nics.size(), 30U);
  const auto rdmap80 = std::ranges::find(facts.nics, "rdmap80s0", &NicFact::name);
  ASSERT_NE(rdmap80, facts.nics.end());
  EXPECT_EQ(rdmap80->ports.at(0).state, "DOWN");
  EXPECT_FALSE(facts.gpudirect.nvidia_peermem);
  EXPECT_FALSE(facts.gpudirect.open_kernel_module);
  EXPECT_FALSE(facts.gpudirect.dmabuf);
  EXPECT_TRUE(facts.memory.memlock_known);
  EXPECT_EQ(facts.memory.memlock_bytes, std::optional<std::uint64_t>(64 * 1024));
}

TEST(SystemFacts, OpenModuleOnOldKernelHasNoDmabuf) {
  const FixtureTree tree("p5", "--kernel 5.10.0-32-cloud-amd64");
  const GpuDirectFact gpudirect = read_gpudirect(tree.root());
  EXPECT_TRUE(gpudirect.open_kernel_module);
  EXPECT_FALSE(gpudirect.dmabuf);
}

TEST(SystemFacts, GpusWithoutDriverHaveNoModel) {
  const FixtureTree tree("p4d", "--no-driver");
  const HostFacts facts = read_system_facts(at(tree));
  EXPECT_EQ(facts.driver_version, "");
  ASSERT_EQ(facts.gpus.size(), 8U);
  EXPECT_EQ(facts.gpus[0].model, "");
}

TEST(SystemFacts, EmptyRootLeavesEverythingUnknown) {
  const FixtureTree tree("p5");
  const auto empty = tree.root() / "empty";
  std::filesystem::create_directories(empty);
  const HostFacts facts = read_system_facts(paths(empty, "", "/home/u"));
  EXPECT_EQ(facts.host, "");
  EXPECT_EQ(facts.instance_type, "");
  EXPECT_EQ(facts.driver_version, "");
  EXPECT_TRUE(facts.gpus.empty());
  EXPECT_TRUE(facts.nics.empty());
  EXPECT_TRUE(facts.affinities.empty());
  EXPECT_FALSE(facts.gpudirect.nvidia_peermem);
  EXPECT_EQ(facts.gpudirect.kernel, "");
  EXPECT_FALSE(facts.memory.memlock_known);
  EXPECT_EQ(facts.memory.transparent_hugepages, "");
  EXPECT_FALSE(facts.memory.dev_shm_bytes.has_value());
  EXPECT_TRUE(facts.nccl_conf.empty());
  EXPECT_TRUE(facts.nccl_conf_files.empty());
  // A root that does not exist at all is no different.
  EXPECT_TRUE(read_system_facts(paths(empty / "missing")).gpus.empty());
}

TEST(SystemFacts, MalformedFilesLeaveTheirFactUnknown) {
  const FixtureTree tree("ib");
  tree.write("/sys/class/infiniband/mlx5_0/ports/1/rate", "fast\n");
  tree.write("/proc/self/limits", "Max locked memory   lots   lots   bytes\n");
  tree.write("/sys/devices/virtual/dmi/id/product_name", "\n");
  tree.write("/proc/driver/nvidia/version", "nonsense\n");
  const HostFacts facts = read_system_facts(at(tree));
  EXPECT_EQ(facts.nics.at(0).name, "mlx5_0");
  EXPECT_FALSE(facts.nics.at(0).ports.at(0).rate_gbps.has_value());
  EXPECT_FALSE(facts.memory.memlock_known);
  EXPECT_EQ(facts.driver_version, "");
  EXPECT_EQ(facts.instance_type, "");
}

TEST(SystemFacts, InstanceTypeFromEitherDmiPath) {
  const FixtureTree tree("g5");
  std::filesystem::remove(tree.root() / "sys/devices/virtual/dmi/id/product_name");
  EXPECT_EQ(read_instance_type(tree.root()), "");
  tree.write("/sys/class/dmi/id/product_name", "p6-b200.48xlarge\n");
  EXPECT_EQ(read_instance_type(tree.root()), "p6-b200.48xlarge");
  tree.write("/sys/class/dmi/id/product_name", "Standard PC (Q35 + ICH9, 2009)\n");
  EXPECT_EQ(read_instance_type(tree.root()), "");
}

TEST(SystemFacts, NumaNodesOfCpus) {
  const FixtureTree tree("p5");  // node0 0-47,96-143; node1 48-95,144-191
  const std::array<int, 2> first{0, 1};
  const std::array<int, 2> both{47, 144};
  const std::array<int, 1> second_half{100};
  EXPECT_EQ(numa_nodes_of(tree.root(), first), (std::vector<int>{0}));
  EXPECT_EQ(numa_nodes_of(tree.root(), both), (std::vector<int>{0, 1}));
  EXPECT_EQ(numa_nodes_of(tree.root(), second_half), (std::vector<int>{0}));
  EXPECT_EQ(numa_nodes_of(tree.root(), std::span<const int>{}), (std::vector<int>{}));
  EXPECT_EQ(numa_nodes_of(tree.root() / "missing", first), (std::vector<int>{}));
}

// ---- NCCL's configuration files -------------------------------------------------------------

TEST(NcclConf, UserFileThenSystemFileFirstSettingWins) {
  const FixtureTree tree("p5");
  tree.write("/home/ann/.nccl.conf",
             "# tuned for this cluster\n"
             "NCCL_DEBUG=INFO\n"
             "NCCL_PROTO=Simple\n"
             "NCCL_PROTO=LL128\n"  // setenv without overwrite: the first line stays
             "not a setting\n");
  tree.write("/etc/nccl.conf", "NCCL_DEBUG=WARN\nNCCL_SOCKET_IFNAME==ens1f0\n");
  const NcclConf conf = read_nccl_conf(paths(tree.root(), "", "/home/ann"));
  EXPECT_EQ(conf.files, (std::vector<std::string>{"/home/ann/.nccl.conf", "/etc/nccl.conf"}));
  EXPECT_EQ(conf.values, (std::map<std::string, std::string>{{"NCCL_DEBUG", "INFO"},
                                                             {"NCCL_PROTO", "Simple"},
                                                             {"NCCL_SOCKET_IFNAME", "=ens1f0"}}));
}

TEST(NcclConf, ConfFileReplacesTheUserFile) {
  const FixtureTree tree("p5");
  tree.write("/home/ann/.nccl.conf", "NCCL_DEBUG=INFO\n");
  tree.write("/opt/job/nccl.conf", "NCCL_ALGO=Ring\n");
  tree.write("/etc/nccl.conf", "NCCL_ALGO=Tree\nNCCL_DEBUG=WARN\n");
  const HostFacts facts = read_system_facts(paths(tree.root(), "/opt/job/nccl.conf", "/home/ann"));
  EXPECT_EQ(facts.nccl_conf_files,
            (std::vector<std::string>{"/opt/job/nccl.conf", "/etc/nccl.conf"}));
  EXPECT_EQ(facts.nccl_conf.at("NCCL_ALGO"), "Ring");
  EXPECT_EQ(facts.nccl_conf.at("NCCL_DEBUG"), "WARN");  // ~/.nccl.conf was not read

  // The environment wins over every file.
  HostFacts with_env = facts;
  with_env.env["NCCL_ALGO"] = "Tree";
  EXPECT_EQ(with_env.setting("NCCL_ALGO"), "Tree");
  EXPECT_EQ(facts.setting("NCCL_ALGO"), "Ring");
}

TEST(NcclConf, MissingFilesAreNotListed) {
  const FixtureTree tree("g5");
  const NcclConf conf = read_nccl_conf(paths(tree.root(), "/nowhere.conf", "/home/ann"));
  EXPECT_TRUE(conf.files.empty());
  EXPECT_TRUE(conf.values.empty());
}

}  // namespace
}  // namespace collbench::doctor
