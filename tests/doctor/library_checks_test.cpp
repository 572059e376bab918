// Libraries against hardware: NCCL and the CUDA driver on GPU hosts, a net plugin that cannot
// load, and libfabric's efa provider against the EFA devices in /sys.
#include "collbench/doctor/library_checks.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "findings.h"

namespace collbench::doctor {
namespace {

HostFacts efa_host(int efa_devices) {
  HostFacts host;
  host.host = "node1";
  host.gpus.resize(8);
  for (int i = 0; i < efa_devices; ++i) {
    NicFact nic;
    nic.name = "rdmap" + std::to_string(i) + "s0";
    nic.kind = NicKind::kEfa;
    host.nics.push_back(nic);
  }
  host.libraries = {LibraryFact{"nccl", true, "/usr/lib/libnccl.so.2", "2.28.9", {}},
                    LibraryFact{"cuda_driver", true, "/usr/lib/libcuda.so.1", "12.8", {}},
                    LibraryFact{"libfabric", true, "/opt/amazon/efa/lib/libfabric.so.1", "2.1", {}},
                    LibraryFact{"net_plugin",
                                true,
                                "/opt/amazon/ofi-nccl/lib/libnccl-net.so",
                                "1.14.0",
                                {{"network", "Libfabric"}}}};
  host.fabric = FabricFact{{"efa", "shm", "tcp"}, efa_devices};
  return host;
}

using testing::find;

bool any_failure(const std::vector<Finding>& findings) {
  return std::any_of(findings.begin(), findings.end(),
                     [](const Finding& f) { return f.severity == Severity::kFailure; });
}

TEST(LibraryChecks, AHealthyEfaHostPasses) {
  const auto findings = library_findings(efa_host(32));
  EXPECT_FALSE(any_failure(findings));
  ASSERT_NE(find(findings, "fabric.efa_provider"), nullptr);
  EXPECT_EQ(find(findings, "fabric.efa_provider")->message,
            "libfabric 2.1 reports all 32 EFA devices");
  EXPECT_EQ(find(findings, "libraries.nccl")->message, "NCCL 2.28.9 from /usr/lib/libnccl.so.2");
}

TEST(LibraryChecks, EfaDevicesWithoutTheEfaProviderFail) {
  HostFacts host = efa_host(4);
  host.fabric->providers = {"tcp", "udp"};
  host.fabric->efa_domains = 0;
  const auto findings = library_findings(host);
  const Finding* f = find(findings, "fabric.efa_provider");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kFailure);
  EXPECT_EQ(f->message,
            "4 EFA devices in /sys, but libfabric 2.1 lists no efa provider (providers: tcp, "
            "udp)");
  EXPECT_EQ(f->hosts, std::vector<std::string>{"node1"});
  EXPECT_FALSE(f->source.empty());
}

TEST(LibraryChecks, FewerEfaDomainsThanDevicesWarn) {
  HostFacts host = efa_host(32);
  host.fabric->efa_domains = 30;
  const auto findings = library_findings(host);
  const Finding* f = find(findings, "fabric.efa_domains");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kWarning);
  EXPECT_EQ(f->message, "libfabric's efa provider reports 30 devices of the 32 in /sys");
}

TEST(LibraryChecks, MissingNcclOrDriverOnAGpuHostFails) {
  HostFacts host = efa_host(1);
  host.libraries[0] = LibraryFact{"nccl", false, "", "", {{"tried", "libnccl.so.2"}}};
  host.libraries[1] = LibraryFact{"cuda_driver", false, "", "", {{"tried", "libcuda.so.1"}}};
  const auto findings = library_findings(host);
  EXPECT_EQ(find(findings, "libraries.nccl")->severity, Severity::kFailure);
  EXPECT_EQ(find(findings, "libraries.cuda_driver")->severity, Severity::kFailure);
  // Without GPUs neither matters.
  host.gpus.clear();
  const auto without_gpus = library_findings(host);
  EXPECT_EQ(find(without_gpus, "libraries.nccl"), nullptr);
  EXPECT_EQ(find(without_gpus, "libraries.cuda_driver"), nullptr);
}

TEST(LibraryChecks, APluginThatDoesNotLoadFailsWithTheLoadersWords) {
  HostFacts host = efa_host(4);
  host.libraries[3] = LibraryFact{
      "net_plugin",
      false,
      "",
      "",
      {{"tried", "libnccl-net.so"},
       {"error", "libfabric.so.1: cannot open shared object file: No such file or directory"}}};
  const auto findings = library_findings(host);
  const Finding* f = find(findings, "libraries.net_plugin_load");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kFailure);
  EXPECT_EQ(f->message,
            "NCCL's net plugin libnccl-net.so does not load: libfabric.so.1: cannot open shared "
            "object file: No such file or directory");
}

TEST(LibraryChecks, NoFabricAnswerNoFabricFinding) {
  HostFacts host = efa_host(4);
  host.fabric.reset();
  const auto findings = library_findings(host);
  EXPECT_EQ(find(findings, "fabric.efa_provider"), nullptr);
}

}  // namespace
}  // namespace collbench::doctor
