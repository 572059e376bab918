// The per-host hardware checks: healthy fixture hosts pass, each broken variant names its fault.
#include "collbench/doctor/hardware_checks.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "collbench/doctor/system_facts.h"
#include "findings.h"
#include "fixture_tree.h"

namespace collbench::doctor {
namespace {

using testing::FixtureTree;

std::vector<Finding> findings_of(std::string_view host, std::string_view options = "") {
  const FixtureTree tree(host, options);
  return hardware_findings(read_system_facts(testing::paths(tree.root())));
}

using testing::find;

std::string failures(const std::vector<Finding>& findings) {
  std::string text;
  for (const auto& f : findings) {
    if (f.severity == Severity::kFailure) text += f.check + ": " + f.message + "\n";
  }
  return text;
}

std::string contains(std::string_view text, std::string_view part) {
  return text.find(part) == std::string_view::npos
             ? "\"" + std::string(text) + "\" lacks \"" + std::string(part) + "\""
             : "";
}

TEST(HardwareChecks, HealthyHostsHaveNoFailure) {
  for (const std::string_view host : {"p5", "p4d", "g5", "ib"}) {
    const auto findings = findings_of(host);
    EXPECT_EQ(failures(findings), "") << host;
    ASSERT_NE(find(findings, "host.summary"), nullptr) << host;
    EXPECT_EQ(find(findings, "nics.ports_down"), nullptr) << host;
    EXPECT_EQ(find(findings, "memory.memlock"), nullptr) << host;
  }
}

TEST(HardwareChecks, SummaryNamesTheFacts) {
  const auto findings = findings_of("p5");
  const Finding* summary = find(findings, "host.summary");
  ASSERT_NE(summary, nullptr);
  EXPECT_EQ(summary->severity, Severity::kOk);
  EXPECT_EQ(summary->hosts, (std::vector<std::string>{"p5-node1"}));
  for (const auto part : {"p5.48xlarge", "8 × NVIDIA H100 80GB HBM3", "driver 550.127.05",
                          "32 EFA devices", "32 of 32 ports ACTIVE", "100 Gb/s"}) {
    EXPECT_EQ(contains(summary->message, part), "");
  }
  const auto ib = findings_of("ib");
  const Finding* ib_summary = find(ib, "host.summary");
  ASSERT_NE(ib_summary, nullptr);
  EXPECT_EQ(contains(ib_summary->message, "8 InfiniBand devices, 8 of 8 ports ACTIVE at 400 Gb/s"),
            "");
}

TEST(HardwareChecks, MissingGpuIsAFailure) {
  const auto findings = findings_of("p5", "--gpus 7");
  const Finding* gpus = find(findings, "instance.gpus");
  ASSERT_NE(gpus, nullptr) << failures(findings);
  EXPECT_EQ(gpus->severity, Severity::kFailure);
  EXPECT_EQ(contains(gpus->message, "7 GPUs where p5.48xlarge has 8"), "");
  EXPECT_FALSE(gpus->source.empty());
}

TEST(HardwareChecks, MissingEfaDeviceIsAFailure) {
  const auto findings = findings_of("p4d", "--nics 3");
  const Finding* efa = find(findings, "instance.efa");
  ASSERT_NE(efa, nullptr) << failures(findings);
  EXPECT_EQ(efa->severity, Severity::kFailure);
  EXPECT_EQ(contains(efa->message, "3 EFA devices where p4d.24xlarge has 4"), "");
}

TEST(HardwareChecks, PortDownIsAFailureNamingTheDevice) {
  const auto findings = findings_of("p5", "--port-down rdmap79s0 --port-down rdmap80s0");
  const Finding* down = find(findings, "nics.ports_down");
  ASSERT_NE(down, nullptr);
  EXPECT_EQ(down->severity, Severity::kFailure);
  EXPECT_EQ(contains(down->message, "2 of 32"), "");
  EXPECT_EQ(contains(down->message, "rdmap79s0 DOWN"), "");
  EXPECT_EQ(contains(down->message, "rdmap80s0 DOWN"), "");
}

TEST(HardwareChecks, MixedRatesAreAWarning) {
  const auto findings = findings_of("ib", "--rate mlx5_3=200");
  const Finding* rates = find(findings, "nics.rates");
  ASSERT_NE(rates, nullptr);
  EXPECT_EQ(rates->severity, Severity::kWarning);
  EXPECT_EQ(contains(rates->message, "1 at 200 Gb/s (mlx5_3); 7 at 400 Gb/s"), "");
  EXPECT_EQ(failures(findings), "");
}

TEST(HardwareChecks, NoPeermemWithoutDmabufIsAFailure) {
  const auto findings = findings_of("p4d", "--no-peermem");
  const Finding* rdma = find(findings, "gpudirect.rdma");
  ASSERT_NE(rdma, nullptr);
  EXPECT_EQ(rdma->severity, Severity::kFailure);
  EXPECT_EQ(contains(rdma->message, "proprietary"), "");
  EXPECT_FALSE(rdma->reason.empty());

  EXPECT_NE(find(findings_of("ib", "--no-peermem"), "gpudirect.rdma"), nullptr);
  EXPECT_NE(find(findings_of("p5", "--no-peermem --module proprietary"), "gpudirect.rdma"),
            nullptr);
  EXPECT_NE(find(findings_of("p5", "--no-peermem --kernel 5.10.0"), "gpudirect.rdma"), nullptr);
}

TEST(HardwareChecks, DmabufStandsInForPeermem) {
  const auto findings = findings_of("p5", "--no-peermem");
  EXPECT_EQ(failures(findings), "");
  const Finding* path = find(findings, "gpudirect.path");
  ASSERT_NE(path, nullptr);
  EXPECT_EQ(path->severity, Severity::kInfo);
  EXPECT_EQ(contains(path->message, "dma-buf"), "");
  EXPECT_EQ(path->message.find("nvidia_peermem"), std::string::npos);
}

TEST(HardwareChecks, MemlockLimitIsAWarning) {
  const auto findings = findings_of("p5", "--memlock-kib 64");
  const Finding* memlock = find(findings, "memory.memlock");
  ASSERT_NE(memlock, nullptr);
  EXPECT_EQ(memlock->severity, Severity::kWarning);
  EXPECT_EQ(contains(memlock->message, "64 KiB"), "");
  EXPECT_FALSE(memlock->source.empty());
}

TEST(HardwareChecks, GpusWithoutDriverIsAFailure) {
  const auto findings = findings_of("ib", "--no-driver");
  const Finding* driver = find(findings, "gpus.driver");
  ASSERT_NE(driver, nullptr);
  EXPECT_EQ(driver->severity, Severity::kFailure);
  EXPECT_EQ(contains(driver->message, "8 NVIDIA GPUs"), "");
}

TEST(HardwareChecks, SingleNicAcrossTheSystemIsInformation) {
  const auto findings = findings_of("g5");
  const Finding* topology = find(findings, "topology.gpu_nic");
  ASSERT_NE(topology, nullptr);
  EXPECT_EQ(topology->severity, Severity::kInfo);
  EXPECT_EQ(contains(topology->message, "4 GPUs"), "");
  EXPECT_EQ(find(findings_of("p5"), "topology.gpu_nic"), nullptr);
}

// ---- Facts the trees cannot show (NVML's) ---------------------------------------------------

HostFacts two_gpu_host() {
  HostFacts facts;
  facts.host = "node7";
  facts.driver_version = "550.127.05";
  for (const auto* bus : {"0000:10:00.0", "0000:90:00.0"}) {
    GpuFact gpu;
    gpu.pci_bus_id = bus;
    gpu.model = "NVIDIA H100 80GB HBM3";
    gpu.ecc_enabled = true;
    gpu.persistence = true;
    gpu.mig_enabled = false;
    gpu.source = "nvml";
    facts.gpus.push_back(gpu);
  }
  for (const auto* name : {"mlx5_0", "mlx5_1"}) {
    NicFact nic;
    nic.name = name;
    nic.kind = NicKind::kInfiniband;
    nic.ports.push_back(
        NicPort{.number = 1, .state = "ACTIVE", .link_layer = "InfiniBand", .rate_gbps = 400.0});
    facts.nics.push_back(nic);
  }
  facts.gpudirect.nvidia_peermem = true;
  facts.memory.memlock_known = true;
  return facts;
}

TEST(HardwareChecks, SyntheticHealthyHostIsQuiet) {
  const auto findings = hardware_findings(two_gpu_host());
  std::set<std::string> checks;
  for (const auto& f : findings) checks.insert(f.check);
  EXPECT_EQ(checks, (std::set<std::string>{"host.summary", "gpudirect.path"}));
}

TEST(HardwareChecks, RoceNeedsGpuDirectToo) {
  HostFacts facts = two_gpu_host();
  facts.gpudirect.nvidia_peermem = false;
  for (auto& nic : facts.nics) nic.kind = NicKind::kRoce;
  EXPECT_NE(find(hardware_findings(facts), "gpudirect.rdma"), nullptr);
}

TEST(HardwareChecks, HostWithoutRdmaDevicesNeedsNoGpuDirectNorMemlock) {
  HostFacts facts = two_gpu_host();
  facts.nics.clear();
  facts.gpudirect.nvidia_peermem = false;
  facts.memory.memlock_bytes = 64 * 1024;
  const auto findings = hardware_findings(facts);
  EXPECT_EQ(find(findings, "gpudirect.rdma"), nullptr);
  EXPECT_EQ(find(findings, "memory.memlock"), nullptr);
  EXPECT_EQ(contains(find(findings, "host.summary")->message, "no RDMA device"), "");
}

TEST(HardwareChecks, GpuModes) {
  HostFacts facts = two_gpu_host();
  facts.gpus[1].ecc_enabled = false;
  facts.gpus[0].mig_enabled = true;
  facts.gpus[1].persistence = false;
  const auto findings = hardware_findings(facts);
  ASSERT_NE(find(findings, "gpus.ecc"), nullptr);
  EXPECT_EQ(find(findings, "gpus.ecc")->severity, Severity::kWarning);
  EXPECT_EQ(contains(find(findings, "gpus.ecc")->message, "1 of 2 GPUs"), "");
  ASSERT_NE(find(findings, "gpus.mig"), nullptr);
  EXPECT_EQ(find(findings, "gpus.mig")->severity, Severity::kWarning);
  ASSERT_NE(find(findings, "gpus.persistence"), nullptr);
  EXPECT_EQ(find(findings, "gpus.persistence")->severity, Severity::kInfo);

  facts.gpus[0].ecc_enabled = false;  // off everywhere: a choice, not a mismatch
  EXPECT_EQ(find(hardware_findings(facts), "gpus.ecc")->severity, Severity::kInfo);
}

TEST(HardwareChecks, GpuFarFromEveryNicIsAWarning) {
  HostFacts facts = two_gpu_host();
  facts.affinities = {{.gpu = "0000:10:00.0", .nic = "mlx5_0", .closeness = Closeness::kPcieSwitch},
                      {.gpu = "0000:90:00.0", .nic = "mlx5_0", .closeness = Closeness::kSystem}};
  const Finding* topology = find(hardware_findings(facts), "topology.gpu_nic");
  ASSERT_NE(topology, nullptr);
  EXPECT_EQ(topology->severity, Severity::kWarning);
  EXPECT_EQ(contains(topology->message, "0000:90:00.0 (nearest mlx5_0)"), "");
}

TEST(HardwareChecks, OtherGpuModelThanTheInstanceType) {
  HostFacts facts = two_gpu_host();
  facts.instance_type = "g5.12xlarge";
  const auto findings = hardware_findings(facts);
  const Finding* model = find(findings, "instance.gpu_model");
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->severity, Severity::kWarning);
  EXPECT_NE(find(findings, "instance.gpus"), nullptr);  // 2 of 4
  EXPECT_NE(find(findings, "instance.efa"), nullptr);   // InfiniBand is no EFA
}

TEST(HardwareChecks, KnownInstanceTypesHaveSources) {
  ASSERT_FALSE(known_instance_types().empty());
  for (const auto& spec : known_instance_types()) {
    EXPECT_TRUE(spec.source.starts_with("https://")) << spec.instance_type;
    EXPECT_GT(spec.gpus, 0);
    EXPECT_GT(spec.efa_devices, 0);
    EXPECT_FALSE(spec.model_words.empty());
    EXPECT_EQ(find_instance_spec(spec.instance_type), &spec);
  }
  EXPECT_EQ(find_instance_spec("p5.48xlarge")->efa_devices, 32);
  EXPECT_EQ(find_instance_spec("p5en.48xlarge")->efa_devices, 16);
  EXPECT_EQ(find_instance_spec("m5.large"), nullptr);
}

}  // namespace
}  // namespace collbench::doctor
