// Unit tests of the report builder: statistics and fits, axes and formatting, faceting,
// the comparison rule, the command line and the Google Benchmark output.
#include <gtest/gtest.h>

#include <set>

#include "collbench/error.h"
#include "collbench/report/report.h"
#include "report_test_util.h"

namespace collbench::report {
namespace {

using testing::run_text;
using testing::RunSpec;

TEST(ReportStats, MedianOddEvenEmpty) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median({}), 0);
}

TEST(ReportFit, RecoversAlphaAndBetaExactly) {
  // time = 12 µs + bytes / (50 GB/s) ; 50 GB/s = 5e4 bytes/µs
  std::vector<std::uint64_t> bytes;
  std::vector<double> times;
  for (std::uint64_t b = 8; b <= (std::uint64_t{1} << 30); b *= 8) {
    bytes.push_back(b);
    times.push_back(12.0 + static_cast<double>(b) / 5e4);
  }
  const auto fit = fit_latency_bandwidth(bytes, times);
  ASSERT_TRUE(fit);
  EXPECT_NEAR(fit->alpha_us, 12.0, 1e-6);
  EXPECT_NEAR(fit->beta_gbps, 50.0, 1e-6);
  EXPECT_NEAR(fit->rms_relative, 0.0, 1e-9);
  EXPECT_EQ(fit->points, static_cast<int>(bytes.size()));
}

TEST(ReportFit, RefusesTooFewPointsOrNoRise) {
  EXPECT_FALSE(fit_latency_bandwidth({8, 16}, {1, 2}));
  EXPECT_FALSE(fit_latency_bandwidth({8, 16, 32}, {5, 5, 5}));  // flat: β infinite
  EXPECT_FALSE(fit_latency_bandwidth({8, 16, 32}, {9, 7, 5}));  // falling
}

Point point(std::uint64_t bytes, double busbw, double time) {
  Point p;
  p.bytes = bytes;
  p.busbw = busbw;
  p.algbw = busbw / 2;
  p.time_us = time;
  return p;
}

TEST(ReportFigures, PeakHalfPeakInterpolationAndLatency) {
  const std::vector<Point> points{point(8, 0.5, 5), point(512 << 10, 30, 20),
                                  point(2 << 20, 80, 40), point(64 << 20, 100, 700),
                                  point(256 << 20, 90, 3000)};
  const auto f = compute_figures(points);
  EXPECT_DOUBLE_EQ(f.peak_busbw, 100);
  EXPECT_EQ(f.peak_bytes, 64u << 20);
  ASSERT_TRUE(f.n_half);
  EXPECT_EQ(*f.n_half, 2u << 20);  // first size with >= 50 GB/s
  ASSERT_TRUE(f.at_1m);
  EXPECT_TRUE(f.at_1m->interpolated);
  EXPECT_NEAR(f.at_1m->busbw, 55, 1e-9);  // halfway (in log2 size) between 30 and 80
  ASSERT_TRUE(f.at_64m);
  EXPECT_FALSE(f.at_64m->interpolated);
  EXPECT_DOUBLE_EQ(f.at_64m->busbw, 100);
  EXPECT_FALSE(f.at_1g);  // beyond the measured range
  EXPECT_EQ(f.largest_bytes, 256u << 20);
  EXPECT_EQ(f.smallest_bytes, 8u);
  EXPECT_DOUBLE_EQ(f.smallest_time_us, 5);
  ASSERT_TRUE(f.fit);
  EXPECT_NEAR(f.fit->beta_bus_gbps, f.fit->beta_gbps * 2, 1e-9);  // busbw/algbw = 2
}

TEST(ReportFormat, SignificantDigits) {
  EXPECT_EQ(format_sig(12.345), "12.3");
  EXPECT_EQ(format_sig(4567.8), "4568");
  EXPECT_EQ(format_sig(0.0017768), "0.00178");
  EXPECT_EQ(format_sig(0.00099999), "0.00100");
  EXPECT_EQ(format_sig(0), "0");
  EXPECT_EQ(format_sig(99.96), "100");
  EXPECT_EQ(xml_escape("a<b & \"c\">'"), "a&lt;b &amp; &quot;c&quot;&gt;&#39;");
}

TEST(ReportAxes, Log2ByteTicksAlignOnKibMib) {
  Axis axis{AxisScale::kLog2, AxisFormat::kBytes, "", {}, true};
  const auto ticks = axis_ticks(axis, 8, 512 * 1024);
  std::vector<std::string> labels;
  for (double t : ticks) labels.push_back(tick_label(axis, t));
  // 8 B .. 512 KiB spans 16 octaves: every 2nd octave, aligned so 1 KiB is on the grid.
  EXPECT_EQ(labels, (std::vector<std::string>{"16 B", "64 B", "256 B", "1 KiB", "4 KiB", "16 KiB",
                                              "64 KiB", "256 KiB"}));
  const auto wide = axis_ticks(axis, 8, 16.0 * (1 << 30));
  EXPECT_LE(wide.size(), 10u);
  EXPECT_EQ(tick_label(axis, 1 << 30), "1 GiB");
  Axis linear{AxisScale::kLinear, AxisFormat::kNumber, "", {}, true};
  const auto lin = axis_ticks(linear, 0, 2);
  std::vector<std::string> lin_labels;
  for (double t : lin) lin_labels.push_back(tick_label(linear, t));
  EXPECT_EQ(lin_labels, (std::vector<std::string>{"0", "0.5", "1", "1.5", "2"}));
}

TEST(ReportModel, UnlabelledRunsUseTheFileNameAndMergeRepeats) {
  RunSpec a;
  a.run_id = "00000000000000a1";
  RunSpec b = a;
  b.run_id = "00000000000000a2";
  b.busbw_peak = 200;  // a second repeat of the same configuration, faster
  RunSpec c = a;
  c.run_id = "00000000000000a3";
  c.busbw_peak = 300;
  const auto set = read_results_texts({{"old.jsonl", run_text(a) + run_text(b) + run_text(c)}});
  const Model model = build_model(set);
  ASSERT_EQ(model.configs.size(), 1u);
  EXPECT_EQ(model.configs[0].variant, "old");
  EXPECT_EQ(model.configs[0].run_ids.size(), 3u);
  ASSERT_EQ(model.series.size(), 1u);
  const Point& big = model.series[0].points.back();
  EXPECT_EQ(big.samples, 3);
  // The headline is the median over repeats: the 200 GB/s run's value.
  const double expected = set.rows[a.sizes.size() + 2].busbw();
  EXPECT_DOUBLE_EQ(big.busbw, expected);
  // The band keeps the extremes over every repeat.
  EXPECT_DOUBLE_EQ(big.time_min, testing::model_time(c, "all_reduce", big.bytes) * 0.97);
  EXPECT_DOUBLE_EQ(big.time_p99, testing::model_time(a, "all_reduce", big.bytes) * 1.08);
  EXPECT_LT(big.busbw_low, big.busbw_p50);
  EXPECT_LT(big.busbw_p50, big.busbw_high);
}

// 5 variants × 10 node counts = 50 configurations.
ResultSet fifty_configurations() {
  std::vector<InputText> texts;
  int n = 0;
  for (int v = 0; v < 5; ++v) {
    for (int nodes = 1; nodes <= 10; ++nodes) {
      RunSpec s;
      s.run_id = fmt::format("{:016x}", 0xb00 + n++);
      s.variant = fmt::format("v{}", v);
      s.nodes = nodes;
      s.nranks = nodes * 8;
      texts.push_back({fmt::format("{}-{}.jsonl", s.variant, nodes), run_text(s)});
    }
  }
  return read_results_texts(texts);
}

TEST(ReportLayout, FiftySeriesAreFacetedIntoReadablePanels) {
  const auto set = fifty_configurations();
  const Model model = build_model(set);
  ASSERT_EQ(model.configs.size(), 50u);
  ASSERT_EQ(model.views.size(), 1u);
  ChartOptions options;
  const Layout layout = layout_series(model, model.views[0].series, options);
  // Faceting by variant gives 5 panels of 10 (too many); by nodes 10 panels of 5: chosen.
  EXPECT_EQ(layout.facet_dim, "nodes");
  EXPECT_EQ(layout.panels.size(), 10u);
  for (const auto& [title, members] : layout.panels) EXPECT_LE(members.size(), 8u);
  // The same variant keeps its style in every panel: 5 legend entries.
  EXPECT_EQ(layout.legend.size(), 5u);
  const Chart chart = busbw_chart(model, model.views[0], options);
  const std::string svg = render_svg(chart, true);
  std::size_t panels = 0;
  for (auto pos = svg.find("class=\"panel\""); pos != std::string::npos;
       pos = svg.find("class=\"panel\"", pos + 1)) {
    ++panels;
  }
  EXPECT_EQ(panels, 10u);

  ChartOptions by_variant = options;
  by_variant.facet_by = "variant";
  const Layout forced = layout_series(model, model.views[0].series, by_variant);
  EXPECT_EQ(forced.facet_dim, "variant");
  EXPECT_EQ(forced.panels.size(), 10u);  // 5 variants × 2 numbered panels of at most 8
  for (const auto& [title, members] : forced.panels) EXPECT_LE(members.size(), 8u);

  ChartOptions never = options;
  never.facet_by = "none";
  EXPECT_EQ(layout_series(model, model.views[0].series, never).panels.size(), 1u);
}

Model model_of(const std::vector<RunSpec>& runs, const std::string& name) {
  std::string text;
  for (const auto& r : runs) text += run_text(r);
  return build_model(read_results_texts({{name, text}}));
}

TEST(ReportCompare, RealRegressionNoiseImprovementAndUnmatched) {
  RunSpec base;
  base.variant = "old";
  base.sizes = {8, 4096, 1 << 20, 16 << 20};
  base.tests = {"all_reduce", "sendrecv"};
  // Candidate: all_reduce 16 MiB 25% slower with a tight spread (regression); sendrecv 8 B 10%
  // slower with a wide spread (noise); all_reduce 8 B 20% faster (improvement); one size only in
  // the candidate.
  std::string cand_text;
  RunSpec cand = base;
  cand.variant = "new";
  cand.run_id = "00000000000000c1";
  cand_text = testing::context_line(cand).dump() + "\n";
  for (const auto& test : cand.tests) {
    for (auto bytes : cand.sizes) {
      double factor = 1.0;
      RunSpec spec = cand;
      if (test == "all_reduce" && bytes == (16u << 20)) factor = 1.25;
      if (test == "sendrecv" && bytes == 8) {
        factor = 1.10;
        spec.spread_low = 0.6;
      }
      if (test == "all_reduce" && bytes == 8) factor = 1 / 1.2;
      cand_text += testing::result_line(spec, test, bytes, factor).dump() + "\n";
    }
  }
  cand_text += testing::result_line(cand, "sendrecv", 64 << 20).dump() + "\n";
  const Model baseline = model_of({base}, "old.jsonl");
  const Model candidate = build_model(read_results_texts({{"new.jsonl", cand_text}}));
  const Comparison c = compare(baseline, candidate, {});
  // The variant differs and has one value per side: it tells the sides apart.
  EXPECT_EQ(c.side_dims, std::vector<Dim>{Dim::kVariant});
  EXPECT_EQ(c.matched.size(), 8u);
  EXPECT_EQ(c.regressions, 1);
  EXPECT_EQ(c.noise, 1);
  EXPECT_EQ(c.improvements, 1);
  for (const auto& m : c.matched) {
    if (m.verdict == Verdict::kRegression) {
      EXPECT_EQ(m.test, "all_reduce");
      EXPECT_EQ(m.bytes, 16u << 20);
      EXPECT_NEAR(m.ratio, 0.8, 1e-9);
    }
  }
  ASSERT_EQ(c.unmatched.size(), 1u);
  EXPECT_FALSE(c.unmatched[0].in_baseline);
  EXPECT_EQ(c.unmatched[0].sizes, std::vector<std::uint64_t>{64u << 20});

  // A looser threshold turns the regression into "same".
  CompareOptions loose;
  loose.threshold = 0.3;
  EXPECT_EQ(compare(baseline, candidate, loose).regressions, 0);
}

TEST(ReportCompare, WholeSeriesMissingIsListedNotDropped) {
  RunSpec base;
  base.variant = "a";
  base.tests = {"all_reduce", "all_gather"};
  RunSpec cand = base;
  cand.variant = "b";
  cand.tests = {"all_reduce"};
  const Comparison c = compare(model_of({base}, "a.jsonl"), model_of({cand}, "b.jsonl"), {});
  ASSERT_EQ(c.unmatched.size(), 1u);
  EXPECT_TRUE(c.unmatched[0].in_baseline);
  EXPECT_TRUE(c.unmatched[0].whole_series);
  EXPECT_EQ(c.unmatched[0].test, "all_gather");
  EXPECT_EQ(c.unmatched[0].sizes.size(), base.sizes.size());
  const std::string md = comparison_markdown(c, {});
  EXPECT_NE(md.find("| baseline | all_gather |"), std::string::npos) << md;
}

/// A run's JSONL with every result row stating `buffers` (nullptr: rows without the field, as
/// files older than the option).
std::string run_text(const RunSpec& spec, const char* buffers) {
  std::string text = testing::context_line(spec).dump() + "\n";
  for (const auto& test : spec.tests) {
    for (auto bytes : spec.sizes) {
      auto row = testing::result_line(spec, test, bytes);
      if (buffers) row["buffers"] = buffers;
      text += row.dump() + "\n";
    }
  }
  return text;
}

TEST(ReportCompare, DifferentBufferPoliciesAreNotComparedWithoutSayingSo) {
  RunSpec base;
  base.variant = "old";
  RunSpec cand = base;
  cand.variant = "new";
  cand.run_id = "00000000000000c1";
  // The baseline predates the option (it rotated); the candidate reused its buffers.
  const Model baseline = build_model(read_results_texts({{"old.jsonl", run_text(base, nullptr)}}));
  const Model candidate = build_model(read_results_texts({{"new.jsonl", run_text(cand, "fixed")}}));
  const Comparison c = compare(baseline, candidate, {});
  EXPECT_TRUE(c.matched.empty()) << "warm and cold caches must not be judged against each other";
  EXPECT_FALSE(c.unmatched.empty());
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_NE(c.warnings[0].find("buffers rotate"), std::string::npos) << c.warnings[0];
  EXPECT_NE(c.warnings[0].find("buffers fixed"), std::string::npos) << c.warnings[0];
  EXPECT_NE(comparison_markdown(c, {}).find("**Warning:** the baseline ran with buffers rotate"),
            std::string::npos);

  // Asked to ignore the policy, the points are compared, and the output says what that means.
  CompareOptions ignore;
  ignore.ignore = {Dim::kBuffers};
  const Comparison forced = compare(baseline, candidate, ignore);
  EXPECT_FALSE(forced.matched.empty());
  ASSERT_EQ(forced.warnings.size(), 1u);
  EXPECT_NE(forced.warnings[0].find("buffers ignored"), std::string::npos) << forced.warnings[0];

  // The same policy on both sides: compared, no warning.
  const Comparison same = compare(
      baseline, build_model(read_results_texts({{"new.jsonl", run_text(cand, "rotate")}})), {});
  EXPECT_FALSE(same.matched.empty());
  EXPECT_TRUE(same.warnings.empty());
}

TEST(ReportModel, RowsOfDifferentBufferPoliciesAreDifferentSeries) {
  RunSpec rotate;
  rotate.variant = "v";
  RunSpec fixed = rotate;
  fixed.run_id = "00000000000000f1";
  const Model m = build_model(
      read_results_texts({{"v.jsonl", run_text(rotate, "rotate") + run_text(fixed, "fixed")}}));
  ASSERT_EQ(m.configs.size(), 2u);
  EXPECT_NE(std::find(m.varying.begin(), m.varying.end(), Dim::kBuffers), m.varying.end());
  std::set<std::string> names;
  for (const auto& c : m.configs) names.insert(c.name);
  EXPECT_EQ(names, (std::set<std::string>{"buffers fixed", "buffers rotate"}));
  for (const auto& s : m.series) {
    for (const auto& p : s.points) EXPECT_EQ(p.samples, 1) << "no point merges both policies";
  }
}

ReportOptions parse(std::vector<const char*> args, std::string* exit_text = nullptr) {
  args.insert(args.begin(), "collbench-report");
  std::string text;
  auto o = parse_command_line(static_cast<int>(args.size()), args.data(), text);
  if (exit_text) *exit_text = text;
  return o;
}

void expect_usage(std::vector<const char*> args, const std::string& fragment) {
  try {
    parse(args);
    ADD_FAILURE() << "no error for " << fragment;
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage);
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(ReportCli, ParsesOptions) {
  const auto o = parse({"results/a", "b.jsonl", "-o", "out", "--y-scale", "log", "--scaling-sizes",
                        "1M,64M", "--latency-max", "4K", "--line", "headline", "--max-series", "6",
                        "--facet-by", "nodes"});
  EXPECT_EQ(o.inputs, (std::vector<std::string>{"results/a", "b.jsonl"}));
  EXPECT_EQ(o.output, "out");
  EXPECT_TRUE(o.charts.log_y);
  EXPECT_EQ(o.charts.scaling_sizes, (std::vector<std::uint64_t>{1u << 20, 64u << 20}));
  EXPECT_EQ(o.charts.latency_max_bytes, 4096u);
  EXPECT_EQ(o.charts.line, LineMetric::kHeadline);
  EXPECT_EQ(o.charts.max_series_per_panel, 6);
  const auto c = parse({"--baseline", "x", "--candidate", "y", "--threshold", "7.5%",
                        "--match-ignore", "partition"});
  EXPECT_DOUBLE_EQ(c.compare.threshold, 0.075);
  EXPECT_EQ(c.compare.ignore, std::vector<Dim>{Dim::kPartition});
  EXPECT_DOUBLE_EQ(
      parse({"--baseline", "x", "--candidate", "y", "--threshold", "0.02"}).compare.threshold,
      0.02);
  std::string help;
  parse({"--help"}, &help);
  EXPECT_NE(help.find("--baseline"), std::string::npos);
}

TEST(ReportCli, RejectsBadUsage) {
  expect_usage({"--baseline", "x", "--candidate", "y", "--threshold", "5"}, "5%");
  expect_usage({"--baseline", "x", "--candidate", "y", "--threshold", "abc"}, "percentage");
  expect_usage({"x", "--threshold", "5%"}, "only applies to a comparison");
  expect_usage({"x", "--format", "xml"}, "html or gbench");
  expect_usage({"x", "--y-scale", "cubic"}, "linear or log");
  expect_usage({"x", "--facet-by", "colour"}, "--facet-by colour");
  expect_usage({"x", "--max-series", "0"}, "at least 1");
  expect_usage({"x", "--scaling-sizes", "1M,lots"}, "'lots' is not a size");
  expect_usage({"x", "--no-such-flag"}, "--help");
}

TEST(ReportGbench, CompareToolFieldsAndRepetitions) {
  RunSpec a;
  a.variant = "v";
  RunSpec b = a;
  b.run_id = "00000000000000b2";
  b.repeat = 1;
  const auto set = read_results_texts({{"r.jsonl", run_text(a) + run_text(b)}});
  const Model model = build_model(set);
  std::string text;
  write_gbench_json(set, model, [&text](std::string_view s) { text += s; });
  const auto j = nlohmann::json::parse(text);
  ASSERT_TRUE(j.contains("context"));
  ASSERT_TRUE(j["benchmarks"].is_array());
  EXPECT_EQ(j["benchmarks"].size(), 2 * a.sizes.size());
  std::set<std::string> names;
  for (const auto& b : j["benchmarks"]) {
    for (const char* key : {"name", "run_name", "run_type", "iterations", "real_time", "cpu_time",
                            "time_unit", "repetitions", "repetition_index"}) {
      EXPECT_TRUE(b.contains(key)) << key;
    }
    EXPECT_EQ(b["run_type"], "iteration");
    EXPECT_EQ(b["time_unit"], "us");
    EXPECT_EQ(b["repetitions"], 2);
    names.insert(b["name"].get<std::string>());
  }
  EXPECT_EQ(names.size(), a.sizes.size());
  EXPECT_TRUE(names.count("all_reduce/float/sum/out-of-place/1024"));
}

}  // namespace
}  // namespace collbench::report
