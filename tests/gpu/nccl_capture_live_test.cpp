// The debug-log capture against the real NCCL library (no GPU needed): NCCL must write its log
// where the capture points it, and a user who did not ask for NCCL's log must not see it. One test
// per process: NCCL reads its logging settings once, at its first log line.
#include <gtest/gtest.h>
#include <nccl.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "nccl_debug_capture.h"

namespace collbench::nccl {
namespace {

TEST(NcclCaptureLive, NcclLogsIntoTheCaptureAndASilentUserSeesNothing) {
  for (const char* name : {"NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE"}) unsetenv(name);
  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  {
    DebugCapture capture("testhost", out);
    ncclUniqueId id;
    ASSERT_EQ(ncclGetUniqueId(&id), ncclSuccess);
    // One rank: succeeds on a GPU machine, fails with NCCL WARN lines without a driver. Either
    // way NCCL logs.
    ncclComm_t comm = nullptr;
    if (ncclCommInitRank(&comm, 1, id, 0) == ncclSuccess) ncclCommDestroy(comm);
    capture.poll();
    capture.restore_environment();
    EXPECT_TRUE(capture.captured());
    EXPECT_GE(capture.facts().lines, 1u);
    EXPECT_EQ(std::getenv("NCCL_DEBUG"), nullptr);
    EXPECT_EQ(std::getenv("NCCL_DEBUG_FILE"), nullptr);
  }
  std::fflush(out);
  EXPECT_EQ(std::ftell(out), 0L) << "NCCL's log leaked to a user who did not ask for it";
  std::fclose(out);
}

}  // namespace
}  // namespace collbench::nccl
