// The comparison across hosts: a fact that differs is one finding naming every value with its
// hosts, the most common value first, the odd hosts in the finding's host list; facts that agree
// say nothing; host lists fold into ranges, up to a thousand hosts on one line.
#include "collbench/doctor/cross_host.h"

#include <gtest/gtest.h>

#include "findings.h"
#include "rules_fixtures.h"

namespace collbench::doctor {
namespace {

using testing::efa_host;

std::vector<HostFacts> nodes(int n) {
  std::vector<HostFacts> hosts;
  for (int i = 1; i <= n; ++i) hosts.push_back(efa_host("node" + std::to_string(i)));
  return hosts;
}

using testing::find;

std::string checks(const std::vector<Finding>& findings) {
  std::string out;
  for (const auto& f : findings) out += f.check + ": " + f.message + "\n";
  return out;
}

TEST(CrossHost, HostsThatAgreeSayNothing) {
  EXPECT_TRUE(cross_host_findings({}).empty());
  EXPECT_TRUE(cross_host_findings(nodes(1)).empty());
  auto hosts = nodes(3);
  for (auto& h : hosts) h.env["NCCL_DEBUG"] = "WARN";
  EXPECT_TRUE(cross_host_findings(hosts).empty()) << checks(cross_host_findings(hosts));
}

TEST(CrossHost, NamesAConfFileSettingAndAMissingPluginWithTheirHosts) {
  auto hosts = nodes(4);
  for (auto& h : hosts) h.env["NCCL_BUFFSIZE"] = "8388608";
  hosts[2].env.erase("NCCL_BUFFSIZE");
  hosts[2].nccl_conf["NCCL_BUFFSIZE"] = "4194304";
  hosts[2].nccl_conf_files = {"/etc/nccl.conf"};
  hosts[1].libraries[2] = testing::missing_library("net_plugin", "libnccl-net.so: not found");
  const auto findings = cross_host_findings(hosts);
  ASSERT_EQ(findings.size(), 2u) << checks(findings);

  const Finding* setting = find(findings, "hosts.settings.NCCL_BUFFSIZE");
  ASSERT_NE(setting, nullptr) << checks(findings);
  EXPECT_EQ(setting->severity, Severity::kWarning);
  EXPECT_EQ(setting->message,
            "NCCL_BUFFSIZE: 8388608 on node[1-2,4]; 4194304 on node3 (from /etc/nccl.conf)");
  EXPECT_EQ(setting->hosts, std::vector<std::string>{"node3"});

  const Finding* plugin = find(findings, "hosts.libraries.net_plugin");
  ASSERT_NE(plugin, nullptr) << checks(findings);
  EXPECT_EQ(plugin->severity, Severity::kFailure);
  EXPECT_EQ(plugin->message, "library net_plugin: 1.19.2 on node[1,3-4]; not found on node2");
  EXPECT_EQ(plugin->hosts, std::vector<std::string>{"node2"});
  EXPECT_FALSE(plugin->reason.empty());
}

TEST(CrossHost, UnsetIsAValueToo) {
  auto hosts = nodes(3);
  hosts[0].env["NCCL_ALGO"] = "Ring";
  const auto findings = cross_host_findings(hosts);
  ASSERT_EQ(findings.size(), 1u) << checks(findings);
  EXPECT_EQ(findings[0].message, "NCCL_ALGO: unset on node[2-3]; Ring on node1");
  EXPECT_EQ(findings[0].hosts, std::vector<std::string>{"node1"});
}

TEST(CrossHost, ATieNamesEveryHost) {
  auto hosts = nodes(4);
  hosts[2].driver_version = hosts[3].driver_version = "535.183.01";
  const auto findings = cross_host_findings(hosts);
  ASSERT_EQ(findings.size(), 1u) << checks(findings);
  EXPECT_EQ(findings[0].check, "hosts.driver");
  EXPECT_EQ(findings[0].severity, Severity::kFailure);
  EXPECT_EQ(findings[0].message, "NVIDIA driver: 550.127.05 on node[1-2]; 535.183.01 on node[3-4]");
  EXPECT_EQ(findings[0].hosts, (std::vector<std::string>{"node1", "node2", "node3", "node4"}));
}

TEST(CrossHost, HardwareDifferencesFailDriftWarns) {
  auto hosts = nodes(5);
  hosts[0].gpus.pop_back();                                   // GPU count
  hosts[1].gpus[0].model = "NVIDIA H200";                     // GPU models
  hosts[2].nics.pop_back();                                   // NIC count
  hosts[3].nics[0].ports[0].state = "DOWN";                   // port states
  hosts[4].instance_type = "p5en.48xlarge";                   // instance type
  hosts[4].gpudirect.dmabuf = false;                          // GPUDirect
  hosts[4].memory.memlock_bytes = 65536;                      // memlock
  hosts[4].gpudirect.kernel = "5.15.0-1051-aws";              // kernel
  hosts[4].libraries[0].path = "/opt/nccl/lib/libnccl.so.2";  // same version elsewhere
  const auto findings = cross_host_findings(hosts);
  const std::vector<std::pair<std::string, Severity>> expected{
      {"hosts.instance_type", Severity::kFailure},
      {"hosts.gpus.count", Severity::kFailure},
      {"hosts.gpus.models", Severity::kFailure},
      {"hosts.nics.count", Severity::kFailure},
      {"hosts.nics.ports", Severity::kWarning},
      {"hosts.gpudirect", Severity::kFailure},
      {"hosts.kernel", Severity::kWarning},
      {"hosts.memlock", Severity::kWarning},
      {"hosts.libraries.nccl.path", Severity::kWarning}};
  ASSERT_EQ(findings.size(), expected.size()) << checks(findings);
  for (const auto& [check, severity] : expected) {
    const Finding* f = find(findings, check);
    ASSERT_NE(f, nullptr) << check << "\n" << checks(findings);
    EXPECT_EQ(f->severity, severity) << check;
    EXPECT_EQ(f->hosts.size(), 1u) << check;
  }
  EXPECT_EQ(find(findings, "hosts.gpus.count")->message, "GPUs: 8 on node[2-5]; 7 on node1");
  EXPECT_EQ(find(findings, "hosts.nics.ports")->message,
            "NIC ports: all ACTIVE on node[1-3,5]; 1 DOWN on node4");
  EXPECT_EQ(find(findings, "hosts.memlock")->message,
            "memlock limit: unlimited on node[1-4]; 65536 bytes on node5");
  EXPECT_EQ(find(findings, "hosts.nics.count")->message,
            "RDMA NICs: 32 on node[1-2,4-5]; 31 on node3");
}

TEST(CrossHost, AThousandHostsStayOneLine) {
  auto hosts = nodes(1000);
  hosts[499].libraries[0].version = "2.27.7";
  hosts[776].libraries[0].version = "2.27.7";
  const auto findings = cross_host_findings(hosts);
  ASSERT_EQ(findings.size(), 1u) << checks(findings);
  EXPECT_EQ(findings[0].message,
            "library nccl: 2.28.9 on node[1-499,501-776,778-1000]; 2.27.7 on node[500,777]");
  EXPECT_EQ(findings[0].hosts, (std::vector<std::string>{"node500", "node777"}));
}

TEST(CompressHosts, FoldsTrailingNumbersIntoRanges) {
  EXPECT_EQ(compress_hosts({}), "");
  EXPECT_EQ(compress_hosts({"node3"}), "node3");
  EXPECT_EQ(compress_hosts({"node1", "node2", "node4"}), "node[1-2,4]");
  EXPECT_EQ(compress_hosts({"node4", "node1", "node2", "node1"}), "node[1-2,4]");
  EXPECT_EQ(compress_hosts({"n01", "n02", "n03", "n10"}), "n[01-03,10]");
  EXPECT_EQ(compress_hosts({"node9", "node10"}), "node[9-10]");
  EXPECT_EQ(compress_hosts({"gpu7", "login", "node1", "gpu8"}), "gpu[7-8],login,node1");
  EXPECT_EQ(compress_hosts({"ip-10-0-1-23", "ip-10-0-1-24"}), "ip-10-0-1-[23-24]");
}

TEST(CompressHosts, CountsWhatDoesNotFold) {
  std::vector<std::string> hosts;
  for (int i = 0; i < 20; ++i) hosts.push_back("rack" + std::string(1, char('a' + i)) + "-n1");
  const std::string text = compress_hosts(hosts);
  EXPECT_TRUE(text.starts_with("racka-n1,rackb-n1,")) << text;
  EXPECT_TRUE(text.ends_with("rackl-n1, +8 more")) << text;
}

}  // namespace
}  // namespace collbench::doctor
