// The NCCL backend's CUDA-free decisions: device choice, GPU collisions, dtype/op support,
// version text. No GPU or NCCL needed.
#include "nccl_rules.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "collbench/cuda_device.h"
#include "collbench/error.h"

namespace collbench::nccl {
namespace {

/// Runs `f`, expecting Error(kUsage); returns its message.
template <typename F>
std::string usage_error(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage);
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(DeviceChoice, LocalRankByDefault) {
  const DeviceChoice c = choose_device(-1, nullptr, 3, 8, 8, "node1");
  EXPECT_EQ(c.ordinal, 3);
  EXPECT_EQ(c.reason, "local rank 3");
}

TEST(DeviceChoice, EnvironmentOverridesLocalRank) {
  const DeviceChoice c = choose_device(-1, "0", 3, 4, 8, "node1");
  EXPECT_EQ(c.ordinal, 0);
  EXPECT_EQ(c.reason, "COLLBENCH_DEVICE=0");
}

TEST(DeviceChoice, OptionOverridesEnvironment) {
  const DeviceChoice c = choose_device(2, "0", 3, 4, 8, "node1");
  EXPECT_EQ(c.ordinal, 2);
  EXPECT_EQ(c.reason, "--device 2");
}

TEST(DeviceChoice, NcclTestsDeviceIsEveryLocalRanksGpuAfterCollbenchDevice) {
  // nccl-tests -g 1: every process of the host starts at NCCL_TESTS_DEVICE.
  for (int local_rank : {0, 3}) {
    const DeviceChoice c = choose_device(-1, nullptr, local_rank, 4, 8, "node1", "5");
    EXPECT_EQ(c.ordinal, 5);
    EXPECT_EQ(c.reason, "NCCL_TESTS_DEVICE=5");
  }
  EXPECT_EQ(choose_device(-1, "1", 3, 4, 8, "node1", "5").reason, "COLLBENCH_DEVICE=1");
  EXPECT_EQ(choose_device(2, nullptr, 3, 4, 8, "node1", "5").reason, "--device 2");
  const std::string bad = usage_error([] { choose_device(-1, nullptr, 0, 1, 2, "h", "2"); });
  EXPECT_NE(bad.find("NCCL_TESTS_DEVICE=2: only 2 GPUs are visible"), std::string::npos) << bad;
  const std::string junk = usage_error([] { choose_device(-1, nullptr, 0, 1, 2, "h", "gpu1"); });
  EXPECT_NE(junk.find("NCCL_TESTS_DEVICE=gpu1: expected a GPU ordinal"), std::string::npos) << junk;
}

TEST(DeviceChoice, NcclTestsDeviceIsTheFirstGpuOfAProcessWithSeveralRanks) {
  // nccl-tests -g 4 with NCCL_TESTS_DEVICE=2: the process's ranks use GPUs 2, 3, 4 and 5.
  for (int index = 0; index < 4; ++index) {
    const DeviceChoice c = choose_device(-1, nullptr, index, 4, 8, "node1", "2", index);
    EXPECT_EQ(c.ordinal, 2 + index);
  }
  EXPECT_EQ(choose_device(-1, nullptr, 3, 4, 8, "node1", "2", 3).reason,
            "NCCL_TESTS_DEVICE=2, rank 3 of the process (-t, -g)");
  const std::string beyond = usage_error([] { choose_device(-1, nullptr, 1, 2, 2, "h", "1", 1); });
  EXPECT_NE(beyond.find("rank 1 of the process (-t, -g) needs GPU 2, but only 2 GPUs are visible"),
            std::string::npos)
      << beyond;
  // By local rank (no variable): the process's ranks are consecutive local ranks.
  EXPECT_EQ(choose_device(-1, nullptr, 5, 8, 8, "node1", nullptr, 1).ordinal, 5);
}

TEST(DeviceChoice, OptionBeyondVisibleGpus) {
  const std::string m = usage_error([] { choose_device(1, nullptr, 0, 1, 1, "h200-box"); });
  EXPECT_NE(m.find("--device 1"), std::string::npos) << m;
  EXPECT_NE(m.find("only 1 GPU is visible (ordinal 0) on h200-box"), std::string::npos) << m;
}

TEST(DeviceChoice, BadEnvironmentValue) {
  for (const char* bad : {"", "x", "1x", "-1", "1.5"}) {
    const std::string m = usage_error([&] { choose_device(-1, bad, 0, 1, 8, "h"); });
    EXPECT_NE(m.find("COLLBENCH_DEVICE="), std::string::npos) << m;
    EXPECT_NE(m.find("expected a GPU ordinal"), std::string::npos) << m;
  }
  const std::string m = usage_error([] { choose_device(-1, "8", 0, 1, 8, "h"); });
  EXPECT_NE(m.find("8 GPUs are visible (ordinals 0 to 7)"), std::string::npos) << m;
}

TEST(DeviceChoice, MoreLocalRanksThanGpus) {
  const std::string m = usage_error([] { choose_device(-1, nullptr, 2, 4, 2, "node7"); });
  EXPECT_NE(m.find("4 ranks run on node7 but only 2 GPUs are visible"), std::string::npos) << m;
  EXPECT_NE(m.find("NCCL_HOSTID"), std::string::npos) << m;
}

TEST(DeviceChoice, MentionsCudaVisibleDevices) {
  setenv("CUDA_VISIBLE_DEVICES", "3", 1);
  const std::string m = usage_error([] { choose_device(-1, nullptr, 1, 2, 1, "n"); });
  unsetenv("CUDA_VISIBLE_DEVICES");
  EXPECT_NE(m.find("CUDA_VISIBLE_DEVICES=3"), std::string::npos) << m;
}

TEST(DuplicateDevice, SameGpuOnOneHost) {
  const auto m = duplicate_device(
      {{"node1", "0000:1B:00.0"}, {"node1", "0000:1C:00.0"}, {"node1", "0000:1B:00.0"}});
  ASSERT_TRUE(m.has_value());
  EXPECT_NE(m->find("ranks 0 and 2 both use GPU 0000:1B:00.0 on host node1"), std::string::npos)
      << *m;
  EXPECT_NE(m->find("NCCL_HOSTID"), std::string::npos) << *m;
}

TEST(DuplicateDevice, DistinctHostIdsEmulateNodes) {
  EXPECT_EQ(duplicate_device({{"emu0", "0000:1B:00.0"}, {"emu1", "0000:1B:00.0"}}), std::nullopt);
  EXPECT_EQ(duplicate_device({{"a", "0000:1B:00.0"}, {"a", "0000:1C:00.0"}}), std::nullopt);
  EXPECT_EQ(duplicate_device({}), std::nullopt);
}

TEST(Versions, NcclVersionCodes) {
  EXPECT_EQ(version_string(22803), "2.28.3");
  EXPECT_EQ(version_string(22809), "2.28.9");
  EXPECT_EQ(version_string(21905), "2.19.5");
  EXPECT_EQ(version_string(2708), "2.7.8");  // before 2.9 the code was major*1000+minor*100+patch
}

TEST(Versions, CudaVersions) {
  EXPECT_EQ(format_cuda_version(13000), "13.0");
  EXPECT_EQ(format_cuda_version(12040), "12.4");
  EXPECT_EQ(format_cuda_version(11080), "11.8");
  EXPECT_EQ(format_cuda_version(0), "");
}

TEST(Versions, NvidiaKernelDriver) {
  EXPECT_EQ(
      parse_nvidia_driver_version(
          "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159  Tue Jul 22 19:20:41 UTC 2025\n"
          "GCC version:  gcc version 13.3.0 (Ubuntu 13.3.0-6ubuntu2~24.04)\n"),
      "580.159");
  EXPECT_EQ(parse_nvidia_driver_version(
                "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.133.20  "
                "Release Build  (dvs-builder@U16-I3-B03-4-3)  Fri Mar 14 2025\n"),
            "570.133.20");
  EXPECT_EQ(parse_nvidia_driver_version(""), "");
  EXPECT_EQ(parse_nvidia_driver_version("garbage 1.2\n"), "");
}

TEST(Support, CurrentNcclOnHopperRunsEverything) {
  for (Primitive p : {Primitive::kAllReduce, Primitive::kAllGather, Primitive::kReduceScatter,
                      Primitive::kBroadcast, Primitive::kReduce, Primitive::kAllToAll,
                      Primitive::kSend, Primitive::kRecv}) {
    for (DType t : all_dtypes()) {
      for (ReduceOp op : all_ops()) {
        EXPECT_EQ(unsupported_reason(p, t, op, 22803, 90, 2), std::nullopt)
            << name(p) << " " << name(t);
      }
    }
  }
}

TEST(Support, Fp8NeedsNccl224) {
  const auto why =
      unsupported_reason(Primitive::kAllGather, DType::kFp8E4M3, ReduceOp::kSum, 22304, 90, 2);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("fp8_e4m3 needs NCCL 2.24 or newer (this is NCCL 2.23.4)"), std::string::npos)
      << *why;
}

TEST(Support, Fp8NeedsHopper) {
  const auto why =
      unsupported_reason(Primitive::kAllReduce, DType::kFp8E5M2, ReduceOp::kSum, 22803, 80, 2);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("compute capability 9.0 or newer, where NCCL reduces fp8 (this GPU is 8.0)"),
            std::string::npos)
      << *why;
  EXPECT_TRUE(
      unsupported_reason(Primitive::kAllGather, DType::kFp8E5M2, ReduceOp::kSum, 22803, 89, 2));
  EXPECT_TRUE(
      unsupported_reason(Primitive::kReduceScatter, DType::kFp8E4M3, ReduceOp::kMax, 22803, 86, 2));
  EXPECT_EQ(
      unsupported_reason(Primitive::kReduceScatter, DType::kFp8E4M3, ReduceOp::kMax, 22803, 100, 2),
      std::nullopt);
}

TEST(Support, Fp8AvgNeedsTwoRanks) {
  for (Primitive p : {Primitive::kAllReduce, Primitive::kReduceScatter, Primitive::kReduce}) {
    for (DType t : {DType::kFp8E4M3, DType::kFp8E5M2}) {
      const auto why = unsupported_reason(p, t, ReduceOp::kAvg, 22803, 90, 1);
      ASSERT_TRUE(why.has_value()) << name(p) << " " << name(t);
      EXPECT_NE(why->find(std::string(name(t)) + " avg on a single rank"), std::string::npos)
          << *why;
      EXPECT_EQ(unsupported_reason(p, t, ReduceOp::kAvg, 22803, 90, 2), std::nullopt);
      EXPECT_EQ(unsupported_reason(p, t, ReduceOp::kSum, 22803, 90, 1), std::nullopt);
    }
    // Every other floating type has its one-rank kernel.
    for (DType t : {DType::kHalf, DType::kBfloat16, DType::kFloat, DType::kDouble}) {
      EXPECT_EQ(unsupported_reason(p, t, ReduceOp::kAvg, 22803, 90, 1), std::nullopt);
    }
  }
  // Without a reduction the operator is not used.
  EXPECT_EQ(
      unsupported_reason(Primitive::kAllGather, DType::kFp8E4M3, ReduceOp::kAvg, 22803, 90, 1),
      std::nullopt);
}

TEST(Support, OlderNcclLacksBfloat16AndAvg) {
  EXPECT_TRUE(
      unsupported_reason(Primitive::kAllReduce, DType::kBfloat16, ReduceOp::kSum, 2908, 80, 2));
  const auto avg =
      unsupported_reason(Primitive::kAllReduce, DType::kFloat, ReduceOp::kAvg, 2908, 80, 2);
  ASSERT_TRUE(avg.has_value());
  EXPECT_NE(avg->find("avg needs NCCL 2.10"), std::string::npos) << *avg;
  // avg is ignored for primitives that do not reduce.
  EXPECT_EQ(unsupported_reason(Primitive::kBroadcast, DType::kFloat, ReduceOp::kAvg, 2908, 80, 2),
            std::nullopt);
  EXPECT_EQ(unsupported_reason(Primitive::kAllReduce, DType::kFloat, ReduceOp::kAvg, 21003, 80, 2),
            std::nullopt);
}

}  // namespace
}  // namespace collbench::nccl
