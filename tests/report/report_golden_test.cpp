// Golden tests: the report built from the checked-in fixtures (tests/report/fixtures) must match
// tests/report/golden, text exactly and numbers within a tolerance. To accept a deliberate
// change, regenerate with COLLBENCH_UPDATE_GOLDEN=1 (e.g. `COLLBENCH_UPDATE_GOLDEN=1 ctest -R
// ReportGolden`) and review the diff.
#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>
#include <set>

#include "collbench/report/report.h"
#include "report_test_util.h"

namespace collbench::report {
namespace {

namespace fs = std::filesystem;
using testing::check_golden;
using testing::TempDir;

const fs::path kFixtures = COLLBENCH_REPORT_FIXTURES;
const fs::path kGolden = COLLBENCH_REPORT_GOLDEN;

int run_in_fixtures(const ReportOptions& o) { return testing::run_in(kFixtures, o); }

std::vector<std::string> all(const std::string& text, const std::string& pattern) {
  std::vector<std::string> out;
  const std::regex re(pattern);
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator();
       ++it) {
    out.push_back((*it)[1].str());
  }
  return out;
}

class ReportGolden : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    out_ = new TempDir("collbench-report-golden");
    ReportOptions o;
    o.inputs = {"campaign"};
    o.output = out_->str();
    ASSERT_EQ(run_in_fixtures(o), 0);
  }
  static void TearDownTestSuite() {
    delete out_;
    out_ = nullptr;
  }
  static TempDir* out_;
};
TempDir* ReportGolden::out_ = nullptr;

TEST_F(ReportGolden, Csv) {
  check_golden(out_->path() / "results.csv", kGolden / "campaign" / "results.csv");
}
TEST_F(ReportGolden, PointsCsv) {
  check_golden(out_->path() / "points.csv", kGolden / "campaign" / "points.csv");
}
TEST_F(ReportGolden, Markdown) {
  check_golden(out_->path() / "summary.md", kGolden / "campaign" / "summary.md");
}
TEST_F(ReportGolden, Svgs) {
  for (const char* name : {"busbw-all_reduce.svg", "latency-all_reduce.svg",
                           "scaling-all_reduce.svg", "busbw-sendrecv.svg"}) {
    check_golden(out_->path() / name, kGolden / "campaign" / name);
  }
}

TEST_F(ReportGolden, SvgStructure) {
  const std::string svg = testing::read_file(out_->path() / "busbw-all_reduce.svg");
  // A standalone, well-formed SVG with a size.
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  const auto widths = all(svg, "<svg[^>]* width=\"(\\d+)\"");
  ASSERT_EQ(widths.size(), 1u);
  EXPECT_GT(std::stoi(widths[0]), 300);
  // One line per configuration (2 variants × 2 node counts), one legend entry each.
  EXPECT_EQ(all(svg, "<path class=\"series\" data-name=\"([^\"]+)\"").size(), 4u);
  EXPECT_EQ(all(svg, "<g class=\"legend\" data-entries=\"(\\d+)\"").at(0), "4");
  EXPECT_EQ(all(svg, "<path class=\"band\" ()").size(), 4u);
  // 9 sizes per series, each point with a hover title.
  EXPECT_EQ(all(svg, "<g class=\"point\">(<title>)").size(), 36u);
  // Axes: log2 byte ticks aligned on KiB/MiB, linear GB/s from 0.
  const auto ticks = all(svg, "<text class=\"tick\"[^>]*>([^<]+)</text>");
  const std::set<std::string> tick_set(ticks.begin(), ticks.end());
  for (const char* t :
       {"32 B", "1 KiB", "32 KiB", "1 MiB", "32 MiB", "0", "100", "200", "300", "400"}) {
    EXPECT_TRUE(tick_set.count(t)) << t;
  }
  EXPECT_EQ(all(svg, "<text class=\"axis-label\"[^>]*>([^<]+)</text>"),
            (std::vector<std::string>{"message size (bytes, log2 scale)", "bus bandwidth (GB/s)"}));
  // The hover numbers are the model's: p50 busbw at 64 MiB for nccl-2.21 on 1 node.
  const auto set = read_results({(kFixtures / "campaign").string()});
  const Model model = build_model(set);
  for (const auto& s : model.series) {
    if (s.test != "all_reduce" || s.placement != "out-of-place" ||
        model.configs[s.config].name != "nccl-2.21 · 1 node × 4 ranks") {
      continue;
    }
    const Point& p = s.points.back();
    EXPECT_NE(svg.find(format_sig(p.busbw_p50) + " GB/s busbw (median iteration)"),
              std::string::npos);
    EXPECT_NEAR(p.busbw_p50, p.busbw / 1.01, p.busbw * 0.01);  // the fixture's p50 is 1.01 × time
  }
}

TEST_F(ReportGolden, HtmlIsSelfContained) {
  const std::string html = testing::read_file(out_->path() / "index.html");
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  EXPECT_EQ(html.find("@import"), std::string::npos);
  EXPECT_EQ(html.find("url(http"), std::string::npos);
  // The only URLs are SVG namespace declarations.
  for (const auto& url : all(html, "(https?://[^\"' )]+)"))
    EXPECT_EQ(url, "http://www.w3.org/2000/svg");
  EXPECT_NE(html.find("Content-Security-Policy"), std::string::npos);
  // Every section and every chart is there.
  for (const char* id :
       {"id=\"fingerprints\"", "id=\"bandwidth\"", "id=\"latency\"", "id=\"scaling\"",
        "id=\"figures\"", "id=\"problems\"", "id=\"busbw-all_reduce\"", "id=\"latency-sendrecv\"",
        "id=\"scaling-all_gather\"", "NCCL_PROTO"}) {
    EXPECT_NE(html.find(id), std::string::npos) << id;
  }
}

TEST(ReportGoldenCompare, RegressionReport) {
  TempDir out("collbench-report-golden-compare");
  ReportOptions o;
  o.baseline = {"compare/baseline"};
  o.candidate = {"compare/regressed"};
  o.output = out.str();
  EXPECT_EQ(run_in_fixtures(o), 1);
  check_golden(out.path() / "summary.md", kGolden / "compare" / "summary.md");
  check_golden(out.path() / "compare.csv", kGolden / "compare" / "compare.csv");
  check_golden(out.path() / "ratio-all_reduce.svg", kGolden / "compare" / "ratio-all_reduce.svg");
  const std::string svg = testing::read_file(out.path() / "ratio-all_reduce.svg");
  EXPECT_EQ(all(svg, "<circle class=\"flag\"()").size(),
            3u);  // the three regressed sizes are ringed
}

TEST(ReportGoldenCompare, NoiseIsNotARegression) {
  TempDir out("collbench-report-golden-noise");
  ReportOptions o;
  o.baseline = {"compare/baseline"};
  o.candidate = {"compare/noisy"};
  o.output = out.str();
  EXPECT_EQ(run_in_fixtures(o), 0);
  const std::string md = testing::read_file(out.path() / "summary.md");
  EXPECT_NE(md.find("**OK: none of 24 matched points"), std::string::npos) << md;
  EXPECT_NE(md.find("Beyond the threshold but within noise"), std::string::npos);
}

}  // namespace
}  // namespace collbench::report
