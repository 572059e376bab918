// The doctor's probes on this machine: NCCL's net plugin resolved as NCCL resolves it (with
// plugins built for these tests), the version aws-ofi-nccl states, NVML's bus ids, and the
// environment the doctor records.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "host_probe.h"
#include "library_probe.h"
#include "nvml_probe.h"

namespace collbench::doctor {
namespace {

using Names = std::vector<std::vector<std::string>>;

TEST(NetPluginCandidates, FollowNcclsNamingRules) {
  EXPECT_EQ(net_plugin_candidates(nullptr), (Names{{"libnccl-net.so"}}));
  EXPECT_EQ(net_plugin_candidates("none"), Names{});
  EXPECT_EQ(net_plugin_candidates("NONE"), Names{});
  EXPECT_EQ(net_plugin_candidates("ofi"), (Names{{"ofi", "libnccl-net-ofi.so"}}));
  // A path or a full library name is tried as it is, and only so.
  EXPECT_EQ(net_plugin_candidates("/opt/amazon/ofi-nccl/lib/libnccl-net.so"),
            (Names{{"/opt/amazon/ofi-nccl/lib/libnccl-net.so"}}));
  EXPECT_EQ(net_plugin_candidates("libnccl-net-aws.so"), (Names{{"libnccl-net-aws.so"}}));
  EXPECT_EQ(net_plugin_candidates("aws,,ib"),
            (Names{{"aws", "libnccl-net-aws.so"}, {"ib", "libnccl-net-ib.so"}}));
}

TEST(AwsOfiNcclVersion, ReadFromItsStartUpMessage) {
  EXPECT_EQ(aws_ofi_nccl_version(std::string("x\0NET/OFI Initializing aws-ofi-nccl 1.14.0\0", 45)),
            "1.14.0");
  EXPECT_EQ(aws_ofi_nccl_version("Initializing aws-ofi-nccl 1.7.4-aws"), "1.7.4-aws");
  EXPECT_EQ(aws_ofi_nccl_version("aws-ofi-nccl"), "");
  EXPECT_EQ(aws_ofi_nccl_version(""), "");
}

TEST(NetPluginProbe, NamesThePluginNcclWouldLoad) {
  // By NCCL's short name, found on the library path as libnccl-net-fakeofi.so.
  const LibraryFact plugin = probe_net_plugin("fakeofi");
  ASSERT_TRUE(plugin.found) << plugin.details.size();
  EXPECT_EQ(plugin.path, std::string(DOCTOR_PLUGIN_DIR) + "/libnccl-net-fakeofi.so");
  EXPECT_EQ(plugin.version, "1.14.0");
  EXPECT_EQ(plugin.details.at("network"), "Libfabric");
  EXPECT_EQ(plugin.details.at("interface"), "v8");
  EXPECT_EQ(plugin.details.at("plugin"), "aws-ofi-nccl");
  EXPECT_EQ(plugin.details.count("error"), 0u);

  // An old plugin registers "AWS Libfabric" through an older interface.
  const LibraryFact old = probe_net_plugin(DOCTOR_PLUGIN_DIR "/libnccl-net-fakeold.so");
  ASSERT_TRUE(old.found);
  EXPECT_EQ(old.details.at("network"), "AWS Libfabric");
  EXPECT_EQ(old.details.at("interface"), "v6");
  EXPECT_EQ(old.version, "1.7.4-aws");
}

TEST(NetPluginProbe, TheFirstEntryThatLoadsWins) {
  const LibraryFact plugin = probe_net_plugin("absent,fakeold,fakeofi");
  ASSERT_TRUE(plugin.found);
  EXPECT_EQ(plugin.details.at("network"), "AWS Libfabric");
}

TEST(NetPluginProbe, AbsentPluginListsWhatWasTried) {
  const LibraryFact plugin = probe_net_plugin("absent");
  EXPECT_FALSE(plugin.found);
  EXPECT_EQ(plugin.details.at("tried"), "absent, libnccl-net-absent.so");
  EXPECT_EQ(plugin.details.count("error"), 0u);  // not there is not an error to report
  EXPECT_EQ(probe_net_plugin("none").details.at("tried"), "none (NCCL_NET_PLUGIN=none)");
}

TEST(NetPluginProbe, AFileThatCannotLoadCarriesTheLoadersMessage) {
  const LibraryFact plugin = probe_net_plugin("broken");
  EXPECT_FALSE(plugin.found);
  ASSERT_EQ(plugin.details.count("error"), 1u);
  EXPECT_NE(plugin.details.at("error").find("libdoctor_missing_dependency.so"), std::string::npos)
      << plugin.details.at("error");
}

TEST(NetPluginProbe, ALibraryWithoutTheInterfaceIsFlagged) {
  const LibraryFact plugin = probe_net_plugin("nosymbol");
  ASSERT_TRUE(plugin.found);
  EXPECT_EQ(plugin.details.count("network"), 0u);
  EXPECT_NE(plugin.details.at("error").find("ncclNetPlugin"), std::string::npos);
}

TEST(LibraryProbes, ReportFoundOrNotWithoutFailing) {
  for (const LibraryFact& fact :
       {probe_nccl(), probe_cuda_driver(), probe_nvml_library(), probe_libfabric()}) {
    SCOPED_TRACE(fact.name);
    if (fact.found) {
      EXPECT_FALSE(fact.path.empty());
      EXPECT_EQ(fact.details.count("tried"), 0u);
    } else {
      EXPECT_TRUE(fact.path.empty());
      EXPECT_FALSE(fact.details.at("tried").empty());
    }
  }
  // libfabric is a dependency of this build when it has the ofi backend; then it is found and
  // states its version.
  void* fabric = dlopen("libfabric.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (fabric) {
    const LibraryFact f = probe_libfabric();
    EXPECT_TRUE(f.found);
    EXPECT_TRUE(f.version.rfind("1.", 0) == 0) << f.version;
    dlclose(fabric);
  }
}

TEST(HostProbe, TheCudaRuntimeCollbenchWasBuiltWithIsNamed) {
  const HostFacts facts = probe_host(ProbeOptions{}, "this-host");
  EXPECT_EQ(facts.host, "this-host");
  const LibraryFact* runtime = facts.library("cuda_runtime");
#if COLLBENCH_HAVE_CUDA
  ASSERT_NE(runtime, nullptr);
  EXPECT_TRUE(runtime->found);
  EXPECT_TRUE(runtime->version.find('.') != std::string::npos) << runtime->version;
#else
  EXPECT_EQ(runtime, nullptr);
#endif
  // Every library the doctor knows is asked, found or not.
  for (const char* name : {"nccl", "cuda_driver", "nvml", "libfabric", "net_plugin"}) {
    EXPECT_NE(facts.library(name), nullptr) << name;
  }
}

TEST(Nvml, BusIdsAreWrittenAsSysWritesThem) {
  EXPECT_EQ(normalise_pci_bus_id("00000000:53:00.0"), "0000:53:00.0");
  EXPECT_EQ(normalise_pci_bus_id("0000:9A:00.0"), "0000:9a:00.0");
  EXPECT_EQ(normalise_pci_bus_id("00000001:0A:00.0"), "0001:0a:00.0");
}

TEST(Nvml, MergeKeepsProcfsFactsAndAddsNvmls) {
  GpuFact from_sys;
  from_sys.pci_bus_id = "0000:53:00.0";
  from_sys.model = "NVIDIA H100 80GB HBM3";
  from_sys.numa_node = 0;
  from_sys.source = "procfs";
  std::vector<GpuFact> gpus{from_sys};
  NvmlFacts nvml;
  GpuFact seen;
  seen.pci_bus_id = "0000:53:00.0";
  seen.model = "NVIDIA H100 80GB HBM3";
  seen.ecc_enabled = true;
  seen.mig_enabled = false;
  seen.sm_clock_mhz = 1980;
  seen.source = "nvml";
  GpuFact only_nvml = seen;
  only_nvml.pci_bus_id = "0000:64:00.0";
  nvml.gpus = {seen, only_nvml};
  merge_nvml(gpus, nvml);
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].numa_node, 0);  // /sys's fact kept
  EXPECT_EQ(gpus[0].ecc_enabled, true);
  EXPECT_EQ(gpus[0].sm_clock_mhz, 1980);
  EXPECT_EQ(gpus[0].source, "nvml");
  EXPECT_EQ(gpus[1].pci_bus_id, "0000:64:00.0");
}

TEST(Environment, RecordsWhatDecidesNcclsBehaviourAndRedactsSecrets) {
  const char* envp[] = {"NCCL_BUFFSIZE=4194304",
                        "FI_PROVIDER=efa",
                        "OFI_NCCL_PROTOCOL=RDMA",
                        "CUDA_VISIBLE_DEVICES=0,1",
                        "LD_LIBRARY_PATH=/opt/amazon/ofi-nccl/lib",
                        "HOME=/root",
                        "SLURM_PROCID=3",
                        "NCCL_IB_SECRET_TOKEN=hunter2",
                        "NOT_AN_ASSIGNMENT",
                        nullptr};
  const auto env = doctor_environment(envp);
  EXPECT_EQ(env.at("NCCL_BUFFSIZE"), "4194304");
  EXPECT_EQ(env.at("FI_PROVIDER"), "efa");
  EXPECT_EQ(env.at("OFI_NCCL_PROTOCOL"), "RDMA");
  EXPECT_EQ(env.at("CUDA_VISIBLE_DEVICES"), "0,1");
  EXPECT_EQ(env.at("LD_LIBRARY_PATH"), "/opt/amazon/ofi-nccl/lib");
  EXPECT_EQ(env.count("HOME"), 0u);
  EXPECT_EQ(env.count("SLURM_PROCID"), 0u);
  EXPECT_EQ(env.at("NCCL_IB_SECRET_TOKEN"), "<redacted>");
  EXPECT_EQ(env.size(), 6u);
}

}  // namespace
}  // namespace collbench::doctor
