// The ofi backend's choice between busy polling and yielding (bench/backends/ofi/logic/ofi_idle.h).
#include "ofi_idle.h"

#include <gtest/gtest.h>

#include "collbench/error.h"

namespace collbench::ofi {
namespace {

TEST(OfiIdle, SpinsUnlessTheHostRunsMoreRanksThanCores) {
  EXPECT_FALSE(idle_polling(nullptr, 2, 2).yield);
  EXPECT_EQ(idle_polling(nullptr, 2, 2).why, "spin");
  EXPECT_TRUE(idle_polling(nullptr, 3, 2).yield);
  EXPECT_EQ(idle_polling(nullptr, 3, 2).why, "yield (more ranks than cores)");
  EXPECT_FALSE(idle_polling(nullptr, 64, 0).yield) << "cores unknown: spin";
}

TEST(OfiIdle, OpenMpisSettingWinsAsOpenMpiReadsIt) {
  for (const char* yes : {"1", "true", "TRUE", "yes", "Yes"}) {
    const IdlePolling p = idle_polling(yes, 1, 64);
    EXPECT_TRUE(p.yield) << yes;
    EXPECT_EQ(p.why, "yield (OMPI_MCA_mpi_yield_when_idle)") << yes;
  }
  for (const char* no : {"0", "false", "no", "NO"}) {
    EXPECT_FALSE(idle_polling(no, 8, 2).yield) << no << ": spin even with more ranks than cores";
  }
}

TEST(OfiIdle, AValueOpenMpiWouldNotReadIsAUsageError) {
  try {
    idle_polling("sometimes", 2, 2);
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage);
    EXPECT_NE(std::string(e.what()).find("OMPI_MCA_mpi_yield_when_idle=sometimes"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(idle_polling("", 2, 2), Error);
}

}  // namespace
}  // namespace collbench::ofi
