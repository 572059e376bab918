#include "collbench/stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace collbench {
namespace {

TEST(Stats, NearestRankPercentiles) {
  std::vector<double> samples;
  for (int i = 100; i >= 1; --i) samples.push_back(i);  // unsorted on purpose
  const Summary s = summarize(samples);
  EXPECT_EQ(s.n, 100u);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.max, 100);
  EXPECT_EQ(s.p50, 50);
  EXPECT_EQ(s.p99, 99);
  EXPECT_DOUBLE_EQ(s.mean, 50.5);
}

TEST(Stats, P99OfTwentySamplesIsTheMaximum) {
  std::vector<double> samples(20, 1.0);
  samples[7] = 9.0;
  const Summary s = summarize(samples);
  EXPECT_EQ(s.p99, 9.0);
  EXPECT_EQ(s.p50, 1.0);
}

TEST(Stats, CoefficientOfVariationUsesSampleStandardDeviation) {
  const Summary s = summarize(std::vector<double>{2, 4, 4, 4, 5, 5, 7, 9});
  const double sd = std::sqrt(32.0 / 7.0);
  EXPECT_NEAR(s.cv, sd / 5.0, 1e-12);
}

TEST(Stats, EmptyAndSingle) {
  EXPECT_EQ(summarize(std::vector<double>{}).n, 0u);
  const Summary one = summarize(std::vector<double>{3.0});
  EXPECT_EQ(one.p50, 3.0);
  EXPECT_EQ(one.p99, 3.0);
  EXPECT_EQ(one.cv, 0.0);
}

}  // namespace
}  // namespace collbench
