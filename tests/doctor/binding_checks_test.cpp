// Where ranks run against where their GPUs are: ranks squeezed onto the same CPUs, and a rank on
// another NUMA node than its GPU (local rank i uses the i-th GPU in PCI bus order).
#include "collbench/doctor/binding_checks.h"

#include <gtest/gtest.h>

namespace collbench::doctor {
namespace {

/// Two sockets of 8 CPUs; GPUs 0-1 on NUMA node 0, 2-3 on node 1 (listed out of bus order).
HostFacts two_socket_host() {
  HostFacts host;
  host.host = "node7";
  for (const auto& [bus, numa] : std::vector<std::pair<std::string, int>>{
           {"0000:c1:00.0", 1}, {"0000:41:00.0", 0}, {"0000:01:00.0", 0}, {"0000:81:00.0", 1}}) {
    GpuFact gpu;
    gpu.pci_bus_id = bus;
    gpu.numa_node = numa;
    host.gpus.push_back(gpu);
  }
  return host;
}

RankFact rank(int r, int local, std::vector<int> cpus, std::vector<int> numa) {
  return RankFact{r, local, std::move(cpus), std::move(numa)};
}

TEST(BindingChecks, RanksBoundNextToTheirGpusPass) {
  HostFacts host = two_socket_host();
  host.ranks = {rank(0, 0, {0, 1}, {0}), rank(1, 1, {2, 3}, {0}), rank(2, 2, {8, 9}, {1}),
                rank(3, 3, {10, 11}, {1})};
  EXPECT_TRUE(binding_findings(host).empty());
  // Unbound ranks (every CPU, both nodes) are not a finding either.
  std::vector<int> all(16);
  for (int i = 0; i < 16; ++i) all[static_cast<std::size_t>(i)] = i;
  host.ranks = {rank(0, 0, all, {0, 1}), rank(1, 1, all, {0, 1})};
  EXPECT_TRUE(binding_findings(host).empty());
}

TEST(BindingChecks, RanksSqueezedOntoOneCpuAreNamed) {
  HostFacts host = two_socket_host();
  host.ranks = {rank(0, 0, {0}, {0}), rank(1, 1, {0}, {0}), rank(2, 2, {8, 9}, {1})};
  const auto findings = binding_findings(host);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].check, "ranks.shared_cpus");
  EXPECT_EQ(findings[0].severity, Severity::kWarning);
  EXPECT_EQ(findings[0].message, "ranks 0, 1 on node7 are all bound to CPU 0");
  EXPECT_EQ(findings[0].hosts, std::vector<std::string>{"node7"});
}

TEST(BindingChecks, ARankAcrossTheSocketFromItsGpuIsNamed) {
  HostFacts host = two_socket_host();
  // Local rank 2's GPU is the third by bus id (0000:81:00.0, node 1), but it runs on node 0.
  host.ranks = {rank(0, 0, {0, 1}, {0}), rank(5, 2, {2, 3, 4, 5}, {0})};
  const auto findings = binding_findings(host);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].check, "ranks.gpu_numa");
  EXPECT_EQ(findings[0].message,
            "rank 5 on node7 runs on NUMA node 0 but its GPU 0000:81:00.0 is on NUMA node 1");
  // No GPU for the local rank, or an unknown NUMA node: nothing to compare.
  host.ranks = {rank(9, 6, {0}, {0})};
  EXPECT_TRUE(binding_findings(host).empty());
  host.gpus[3].numa_node.reset();
  host.ranks = {rank(5, 2, {2}, {0})};
  EXPECT_TRUE(binding_findings(host).empty());
}

}  // namespace
}  // namespace collbench::doctor
