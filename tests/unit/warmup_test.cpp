// The warm-up check on synthetic per-iteration series: decaying, flat, noisy.
#include "collbench/warmup.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace collbench {
namespace {

// 10 µs settled, starting 3× slower and decaying with a time constant of `tau` iterations.
std::vector<double> decaying(std::size_t n, double tau, double jitter = 0, unsigned seed = 1) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> noise(0, jitter);
  std::vector<double> v;
  for (std::size_t i = 0; i < n; ++i)
    v.push_back(10 + 20 * std::exp(-static_cast<double>(i) / tau) + (jitter > 0 ? noise(rng) : 0));
  return v;
}

TEST(Warmup, DecayingSeriesIsFlaggedWithWhereItSettled) {
  const auto v = decaying(100, 5);
  const auto t = check_warmup(v);
  ASSERT_TRUE(t);
  EXPECT_GT(t->first_median, t->settled_median);
  EXPECT_NEAR(t->settled_median, 10, 0.01);
  // 20·e^(-i/5) falls under the 2% margin (0.2 µs) after about 5·ln(100) ≈ 23 iterations.
  EXPECT_GE(t->settled_at, 15u);
  EXPECT_LE(t->settled_at, 30u);
}

TEST(Warmup, DecayingSeriesUnderNoiseIsFlagged) {
  const auto v = decaying(200, 10, 0.3, 7);
  const auto t = check_warmup(v);
  ASSERT_TRUE(t);
  EXPECT_GT(t->settled_at, 10u);
  EXPECT_LT(t->settled_at, 60u);
}

TEST(Warmup, FlatSeriesIsNotFlagged) { EXPECT_FALSE(check_warmup(std::vector<double>(50, 10.0))); }

TEST(Warmup, NoisyFlatSeriesIsNotFlagged) {
  // Heavy noise (cv 30%) and no trend: never a warning, whatever the seed.
  for (unsigned seed = 1; seed <= 50; ++seed) {
    std::mt19937 rng(seed);
    std::lognormal_distribution<double> noise(std::log(10.0), 0.3);
    std::vector<double> v;
    for (int i = 0; i < 40; ++i) v.push_back(noise(rng));
    EXPECT_FALSE(check_warmup(v)) << "seed " << seed;
  }
}

TEST(Warmup, OneSlowFirstIterationIsNotATrend) {
  std::vector<double> v(40, 10.0);
  v[0] = 100;
  EXPECT_FALSE(check_warmup(v));
}

TEST(Warmup, SmallSlowdownWithinTheMarginIsNotFlagged) {
  // 1% slower at first: under the 2% floor.
  std::vector<double> v(40, 10.0);
  for (int i = 0; i < 10; ++i) v[static_cast<std::size_t>(i)] = 10.1;
  EXPECT_FALSE(check_warmup(v));
}

TEST(Warmup, GettingSlowerIsNotWarmUp) {
  std::vector<double> v;
  for (int i = 0; i < 40; ++i) v.push_back(10 + i);
  EXPECT_FALSE(check_warmup(v));
}

TEST(Warmup, ShortOrNonFiniteSeriesGiveNoVerdict) {
  EXPECT_FALSE(check_warmup(std::vector<double>{30, 20, 10, 10, 10, 10, 10}));
  EXPECT_FALSE(check_warmup(std::vector<double>{}));
  auto v = decaying(40, 3);
  v[20] = std::nan("");
  EXPECT_FALSE(check_warmup(v));
}

}  // namespace
}  // namespace collbench
