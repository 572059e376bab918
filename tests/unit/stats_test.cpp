#include "collbench/stats.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
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

TEST(Stats, MedianOfOddAndEvenCountsAndOfNothing) {
  EXPECT_EQ(median({5, 1, 3}), 3);
  EXPECT_EQ(median({4, 1, 3, 2}), 2.5);  // the mean of the middle two, not the upper one
  EXPECT_EQ(median({7}), 7);
  EXPECT_EQ(median({}), 0);
  EXPECT_TRUE(std::isnan(median({}, std::nan(""))));
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

/// An AR(1) series x[t] = mu + phi (x[t-1] - mu) + e[t], started in its stationary law, so its
/// true mean is mu.
std::vector<double> ar1(std::uint32_t seed, std::size_t n, double phi, double mu) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise(0.0, 1.0);
  std::vector<double> x(n);
  double dev = noise(rng) / std::sqrt(1 - phi * phi);
  for (auto& v : x) {
    v = mu + dev;
    dev = phi * dev + noise(rng);
  }
  return x;
}

/// The naive interval: per-sample standard error, as if the samples were independent.
bool naive_covers(const std::vector<double>& x, double mu) {
  const Summary s = summarize(x);
  const double sd = s.cv * s.mean;
  return std::abs(s.mean - mu) <= 1.96 * sd / std::sqrt(static_cast<double>(x.size()));
}

TEST(MeanInterval, BatchMeansCoverAnAutocorrelatedSeriesWhereTheNaiveIntervalDoesNot) {
  constexpr double kMu = 100;
  constexpr int kSeeds = 400;
  int batch_covered = 0, naive_covered = 0;
  for (int seed = 1; seed <= kSeeds; ++seed) {
    const auto x = ar1(static_cast<std::uint32_t>(seed), 4000, 0.9, kMu);
    const MeanInterval ci = batch_means_interval(x);
    ASSERT_EQ(ci.batches, kMeanIntervalBatches);
    ASSERT_EQ(ci.batch_size, 200u);
    if (std::abs(ci.mean - kMu) <= ci.half_width) ++batch_covered;
    if (naive_covers(x, kMu)) ++naive_covered;
  }
  const double batch = static_cast<double>(batch_covered) / kSeeds;
  const double naive = static_cast<double>(naive_covered) / kSeeds;
  // phi 0.9 inflates the variance of the mean 19-fold: the naive interval covers about 35%.
  EXPECT_LT(naive, 0.6) << "naive coverage " << naive;
  EXPECT_GT(batch, 0.89) << "batch-means coverage " << batch;
  EXPECT_LT(batch, 0.99) << "batch-means coverage " << batch;
}

TEST(MeanInterval, IndependentSamplesCoverAboutNinetyFivePercent) {
  constexpr int kSeeds = 400;
  int covered = 0;
  for (int seed = 1; seed <= kSeeds; ++seed) {
    const auto x = ar1(static_cast<std::uint32_t>(seed) + 1000, 400, 0.0, 5.0);
    const MeanInterval ci = batch_means_interval(x);
    if (std::abs(ci.mean - 5.0) <= ci.half_width) ++covered;
  }
  const double coverage = static_cast<double>(covered) / kSeeds;
  EXPECT_GT(coverage, 0.91);
  EXPECT_LT(coverage, 0.99);
}

TEST(MeanInterval, TooShortASeriesHasNoInterval) {
  const std::vector<double> x(2 * kMeanIntervalBatches - 1, 1.0);
  const MeanInterval ci = batch_means_interval(x);
  EXPECT_EQ(ci.batches, 0u);
  EXPECT_TRUE(std::isinf(ci.half_width));
  EXPECT_TRUE(std::isinf(ci.relative()));
  EXPECT_TRUE(std::isinf(batch_means_interval(std::vector<double>{}).relative()));
}

TEST(MeanInterval, ExactOnAKnownSeriesAndDropsTheLeadingRemainder) {
  // 41 samples in 20 batches of 2: the first sample (a warm-up outlier) is left out.
  std::vector<double> x{1000.0};
  for (int b = 0; b < 20; ++b) {
    x.push_back(b % 2 ? 11.0 : 9.0);
    x.push_back(b % 2 ? 11.0 : 9.0);
  }
  const MeanInterval ci = batch_means_interval(x);
  EXPECT_EQ(ci.batch_size, 2u);
  EXPECT_DOUBLE_EQ(ci.mean, 10.0);
  // Batch means alternate 9 and 11: sample variance 20/19, so the half-width is t19 * sqrt(1/19).
  EXPECT_NEAR(ci.half_width, 2.093 * std::sqrt(20.0 / 19.0 / 20.0), 1e-9);
  EXPECT_NEAR(ci.relative(), ci.half_width / 10.0, 1e-12);
}

TEST(MeanInterval, StudentQuantiles) {
  EXPECT_DOUBLE_EQ(student_t95(1), 12.706);
  EXPECT_DOUBLE_EQ(student_t95(19), 2.093);
  EXPECT_NEAR(student_t95(40), 2.021, 2e-3);
  EXPECT_NEAR(student_t95(120), 1.980, 2e-3);
  EXPECT_GT(student_t95(31), student_t95(1000));
}

}  // namespace
}  // namespace collbench
