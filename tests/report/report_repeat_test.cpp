// Run-to-run spread: each point's coefficient of variation across repeats, the band on the
// charts, the spread table, and a comparison verdict that weighs the spread between runs.
#include <gtest/gtest.h>

#include <cmath>

#include "collbench/report/report.h"
#include "collbench/report/svg.h"
#include "report_test_util.h"

namespace collbench::report {
namespace {

using testing::RunSpec;

constexpr std::uint64_t kBig = 16 << 20;

// One run per factor (repeat k scales every time by factors[k]), with a tight per-iteration
// spread, so any noise is between runs.
std::string repeats_text(RunSpec s, const std::vector<double>& factors, int first_id) {
  s.sizes = {8, 4096, kBig};
  s.spread_low = 0.99;
  s.spread_p50 = 1.0;
  s.spread_p99 = 1.01;
  std::string text;
  for (std::size_t k = 0; k < factors.size(); ++k) {
    s.run_id = fmt::format("{:016x}", first_id + static_cast<int>(k));
    s.repeat = static_cast<int>(k);
    text += testing::context_line(s).dump() + "\n";
    for (auto bytes : s.sizes)
      text += testing::result_line(s, "all_reduce", bytes, factors[k]).dump() + "\n";
  }
  return text;
}

Model model_of_repeats(const std::string& variant, const std::vector<double>& factors,
                       int first_id) {
  RunSpec s;
  s.variant = variant;
  return build_model(
      read_results_texts({{variant + ".jsonl", repeats_text(s, factors, first_id)}}));
}

TEST(ReportRepeats, PointsCarryTheCoefficientOfVariationAcrossRuns) {
  const Model model = model_of_repeats("a", {0.9, 1.0, 1.1}, 0xa10);
  ASSERT_EQ(model.series.size(), 1u);
  const Point& p = model.series[0].points.back();
  const double t = testing::model_time(RunSpec{}, "all_reduce", kBig);
  EXPECT_EQ(p.repeats, 3);
  EXPECT_NEAR(p.repeat_mean_us, t, 1e-9 * t);
  // Sample standard deviation of {0.9, 1, 1.1}·t is 0.1·t.
  EXPECT_NEAR(p.repeat_cv, 0.1, 1e-9);
  EXPECT_NEAR(p.repeat_time_min, 0.9 * t, 1e-9 * t);
  EXPECT_NEAR(p.repeat_time_max, 1.1 * t, 1e-9 * t);
  EXPECT_NEAR(p.repeat_busbw_high / p.repeat_busbw_low, 1.1 / 0.9, 1e-9);

  const Table spread = spread_table(model, model.views[0]);
  ASSERT_EQ(spread.rows.size(), 1u);
  EXPECT_EQ(spread.rows[0][1], "3");
  EXPECT_EQ(spread.rows[0][3], "10.0%");

  const Chart busbw = busbw_chart(model, model.views[0], {});
  EXPECT_NE(busbw.subtitle.find("dashed: range over runs"), std::string::npos) << busbw.subtitle;
  const ChartPoint& cp = busbw.panels.at(0).series.at(0).points.back();
  EXPECT_DOUBLE_EQ(cp.repeat_low, p.repeat_busbw_low);
  EXPECT_DOUBLE_EQ(cp.repeat_high, p.repeat_busbw_high);
  EXPECT_NE(cp.title.find("CV 10.0%"), std::string::npos) << cp.title;
  EXPECT_NE(render_svg(busbw, true).find("class=\"repeat-band\""), std::string::npos);
  const Chart latency = latency_chart(model, model.views[0], {});
  EXPECT_DOUBLE_EQ(latency.panels.at(0).series.at(0).points.front().repeat_high,
                   model.series[0].points.front().repeat_time_max);
}

TEST(ReportRepeats, OneRunHasNoRunToRunSpread) {
  const Model model = model_of_repeats("a", {1.0}, 0xa20);
  const Point& p = model.series[0].points.back();
  EXPECT_EQ(p.repeats, 1);
  EXPECT_EQ(p.repeat_cv, 0);
  EXPECT_TRUE(spread_table(model, model.views[0]).rows.empty());
  const Chart busbw = busbw_chart(model, model.views[0], {});
  EXPECT_EQ(busbw.subtitle.find("range over runs"), std::string::npos);
  EXPECT_TRUE(std::isnan(busbw.panels.at(0).series.at(0).points.back().repeat_low));
  EXPECT_EQ(render_svg(busbw, true).find("repeat-band"), std::string::npos);
}

Verdict verdict_at_big(const Comparison& c) {
  for (const auto& m : c.matched) {
    if (m.bytes == kBig) return m.verdict;
  }
  ADD_FAILURE() << "no matched point at 16 MiB";
  return Verdict::kSame;
}

TEST(ReportRepeats, BetweenRunSpreadBeyondTheWithinRunNoiseIsNotARegression) {
  // Medians: baseline 1.0, candidate 1.25 (ratio 0.8) and the candidate's fastest iteration
  // (1.05 × 0.99) is slower than the baseline's median one: the within-run rule alone calls it a
  // regression. But the runs spread far more than the iterations of a run (CV ≈ 32%), and the
  // means (1.17 and 1.4) are within that spread.
  const Model wide_base = model_of_repeats("old", {0.9, 1.0, 1.6}, 0xb10);
  const Model wide_cand = model_of_repeats("new", {1.05, 1.25, 1.9}, 0xc10);
  // Each run's iterations spread 2% (0.99–1.01); its runs 32%.
  EXPECT_GT(wide_base.series[0].points.back().repeat_cv, 0.3);
  const Comparison wide = compare(wide_base, wide_cand, {});
  EXPECT_EQ(verdict_at_big(wide), Verdict::kNoise);
  EXPECT_EQ(wide.regressions, 0);

  // The same medians with tight runs: a regression.
  const Model tight_base = model_of_repeats("old", {0.99, 1.0, 1.01}, 0xb20);
  const Model tight_cand = model_of_repeats("new", {1.24, 1.25, 1.26}, 0xc20);
  const Comparison tight = compare(tight_base, tight_cand, {});
  EXPECT_EQ(verdict_at_big(tight), Verdict::kRegression);
  EXPECT_EQ(tight.regressions, 3);

  // One run a side: nothing to weigh between runs, the within-run rule decides.
  const Comparison single =
      compare(model_of_repeats("old", {1.0}, 0xb30), model_of_repeats("new", {1.25}, 0xc30), {});
  EXPECT_EQ(verdict_at_big(single), Verdict::kRegression);

  // Improvements weigh it the same way.
  const Comparison faster = compare(wide_cand, wide_base, {});
  EXPECT_EQ(verdict_at_big(faster), Verdict::kNoise);
  EXPECT_EQ(verdict_at_big(compare(tight_cand, tight_base, {})), Verdict::kImprovement);

  const std::string md = comparison_markdown(wide, {});
  EXPECT_NE(md.find("run-to-run spread"), std::string::npos) << md;
}

TEST(ReportRepeats, WelchBoundTightensWithMoreRuns) {
  Point fast, slow;
  fast.repeats = slow.repeats = 2;
  fast.repeat_mean_us = 100;
  slow.repeat_mean_us = 130;
  fast.repeat_cv = slow.repeat_cv = 0.1;  // sd 10 and 13 µs
  // Two runs a side: t(1) = 12.7 over se ≈ 11.6 µs, far beyond a 30 µs difference.
  EXPECT_FALSE(beyond_repeat_spread(fast, slow));
  slow.repeat_cv = 10.0 / 130;  // sd 10 µs
  fast.repeats = slow.repeats = 10;
  // Ten runs a side: t(9) = 2.26 over se ≈ 4.5 µs, so 30 µs is beyond.
  EXPECT_TRUE(beyond_repeat_spread(fast, slow));
  // Never the other way round.
  EXPECT_FALSE(beyond_repeat_spread(slow, fast));
  slow.repeats = 1;
  EXPECT_TRUE(beyond_repeat_spread(fast, slow));
}

}  // namespace
}  // namespace collbench::report
