// "Is my number normal?": a synthetic p5.48xlarge 2-node run judged against the published figures
// of results/reference and against a small fixture reference directory (tests/report/fixtures/
// reference): the verdict wording (golden Markdown), the overlay on the charts (golden SVG), the
// no-match and not-like-for-like wording, earlier runs as the reference, and bad reference files.
#include <gtest/gtest.h>

#include <cstdlib>
#include <regex>
#include <set>

#include "collbench/report/report.h"
#include "report_test_util.h"

// A namespace of its own: the file compiles in one batch with the others (unity build).
namespace collbench::report::reference_tests {
namespace {

namespace fs = std::filesystem;
using testing::check_golden;
using testing::TempDir;

const fs::path kFixtures = COLLBENCH_REPORT_FIXTURES;
const fs::path kGolden = fs::path(COLLBENCH_REPORT_GOLDEN) / "reference";
// Relative to the fixtures directory, the working directory of the golden runs, so that the
// goldens name the reference directories as a person would give them.
const std::string kPublished = "../../../results/reference";
const std::string kFixtureReference = "reference/published";

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;

// A p5-like run: `nodes` hosts of `instance_type` with 8 ranks each on H100s, all_reduce from
// 8 B to 2 GiB (not 16 GiB, which the published figures also have).
struct Platform {
  std::string instance_type = "p5.48xlarge";
  int nodes = 2;
  int gpus_per_node = 8;
  std::string nccl_algo;  ///< NCCL_ALGO in the launch environment ("" = unset)
  std::string run_id = "00000000000000b1";
  std::string start_time = "2025-03-04T05:06:07Z";
  double busbw_peak = 420;
};

std::string platform_run(const Platform& p) {
  testing::RunSpec s;
  s.run_id = p.run_id;
  s.nodes = p.nodes;
  s.nranks = p.nodes * p.gpus_per_node;
  s.sizes = {8, 16, kMiB, 64 * kMiB, kGiB, 2 * kGiB};
  s.alpha_us = 60;
  s.busbw_peak = p.busbw_peak;
  nlohmann::json c = testing::gpu_hosts_context(s, p.instance_type, p.gpus_per_node, p.start_time);
  if (!p.nccl_algo.empty()) c["env"]["NCCL_ALGO"] = p.nccl_algo;
  std::string text = c.dump() + "\n";
  for (auto bytes : s.sizes) text += testing::result_line(s, "all_reduce", bytes).dump() + "\n";
  return text;
}

// Runs the report with the fixtures directory as the working directory.
int run_in_fixtures(const ReportOptions& o, std::FILE* out = nullptr) {
  return testing::run_in(kFixtures, o, out);
}

struct Report {
  std::string md, busbw_svg, latency_svg, html;
};

Report report_of(const Platform& platform, const std::vector<std::string>& reference,
                 const std::string& name) {
  TempDir in("collbench-reference-in-" + name), out("collbench-reference-out-" + name);
  in.write("p5/collbench.jsonl", platform_run(platform));
  ReportOptions o;
  o.inputs = {(in.path() / "p5").string()};
  o.output = out.str();
  o.reference.dirs = reference;
  EXPECT_EQ(run_in_fixtures(o), 0);
  return {testing::read_file(out.path() / "summary.md"),
          testing::read_file(out.path() / "busbw-all_reduce.svg"),
          testing::read_file(out.path() / "latency-all_reduce.svg"),
          testing::read_file(out.path() / "index.html")};
}

// The section of summary.md that the reference figures add.
std::string reference_section(const std::string& md) {
  const auto start = md.find("\n## Reference figures");
  if (start == std::string::npos) return "";
  const auto end = md.find("\n## ", start + 1);
  return md.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// busbw of the synthetic run at `bytes` (as testing::result_line writes it).
double run_busbw(const Platform& p, std::uint64_t bytes) {
  testing::RunSpec s;
  s.nranks = p.nodes * p.gpus_per_node;
  s.alpha_us = 60;
  s.busbw_peak = p.busbw_peak;
  const double t = testing::model_time(s, "all_reduce", bytes);
  return static_cast<double>(bytes) / t * 1e-3 * testing::bus_factor("all_reduce", s.nranks);
}

TEST(ReportReference, PublishedFiguresGolden) {
  const Report r = report_of({}, {kPublished}, "published");
  {
    TempDir tmp("collbench-reference-golden");
    check_golden(tmp.write("summary.md", r.md), kGolden / "p5-published" / "summary.md");
    check_golden(tmp.write("busbw.svg", r.busbw_svg),
                 kGolden / "p5-published" / "busbw-all_reduce.svg");
    check_golden(tmp.write("latency.svg", r.latency_svg),
                 kGolden / "p5-published" / "latency-all_reduce.svg");
  }
  // The figures of aws-p5.json, by exact size: 1 GiB and 2 GiB (two published rows) by busbw,
  // 8 B and 16 B by time, 16 GiB named as not measured.
  const std::string section = reference_section(r.md);
  const Platform p;
  EXPECT_NE(section.find(fmt::format(
                "all_reduce at 1 GiB: {:.0f}% of the published p5.48xlarge 2-node figure (436.95 "
                "GB/s, awsome-distributed-training micro-benchmarks/nccl-tests/README.md)",
                100 * run_busbw(p, kGiB) / 436.95)),
            std::string::npos)
      << section;
  EXPECT_NE(section.find(fmt::format("all_reduce at 2 GiB: {:.0f}% of the published p5.48xlarge "
                                     "2-node figure (443.72 GB/s",
                                     100 * run_busbw(p, 2 * kGiB) / 443.72)),
            std::string::npos);
  EXPECT_NE(section.find("(437.79 GB/s"), std::string::npos);
  EXPECT_NE(section.find("all_reduce at 8 B: "), std::string::npos);
  EXPECT_NE(section.find("the published p5.48xlarge 2-node time (69.12 µs"), std::string::npos);
  EXPECT_NE(section.find("(69.29 µs, aws/aws-k8s-tester pull request #585)"), std::string::npos);
  EXPECT_NE(section.find("all_reduce at 16 GiB: size not measured in this run"), std::string::npos);
  // Every verdict at 2 nodes warns that Tree/NVLSTree inflate busbw there.
  EXPECT_NE(section.find("Not like for like: at 2 nodes NCCL's Tree and NVLSTree inflate busbw"),
            std::string::npos);
  // Other platforms' figures are not used.
  EXPECT_EQ(section.find("p4de"), std::string::npos);
  EXPECT_EQ(section.find("CoreWeave"), std::string::npos);
  // The overlay: one reference series per source with crosses and legend entries.
  EXPECT_NE(r.busbw_svg.find(">published: awsome-distributed-training "
                             "micro-benchmarks/nccl-tests/README.md</text>"),
            std::string::npos);
  EXPECT_NE(r.busbw_svg.find("class=\"reference-mark\""), std::string::npos);
  EXPECT_NE(r.latency_svg.find("aws/aws-k8s-tester pull request #585"), std::string::npos);
  EXPECT_NE(r.html.find("id=\"reference\""), std::string::npos);
}

TEST(ReportReference, FixtureReferenceGolden) {
  const Report r = report_of({}, {kFixtureReference}, "fixture");
  TempDir tmp("collbench-reference-golden-fixture");
  check_golden(tmp.write("summary.md", r.md), kGolden / "p5-fixture" / "summary.md");
  check_golden(tmp.write("busbw.svg", r.busbw_svg),
               kGolden / "p5-fixture" / "busbw-all_reduce.svg");
  const std::string section = reference_section(r.md);
  const Platform p;
  EXPECT_NE(section.find(fmt::format("all_reduce at 1 MiB: {:.0f}% of the published p5.48xlarge "
                                     "2-node figure (40 GB/s, cluster-notes nccl/p5-two-nodes.md)",
                                     100 * run_busbw(p, kMiB) / 40)),
            std::string::npos)
      << section;
  // The stated peak is set beside the series' peak busbw.
  EXPECT_NE(section.find("all_reduce peak: "), std::string::npos);
  // The 4-GPUs-per-node figure does not apply to 8 GPUs per node.
  EXPECT_EQ(section.find("200 GB/s"), std::string::npos);
}

TEST(ReportReference, NotLikeForLike) {
  // The reference states NVLSTree at 64 MiB; this run does not record its algorithm.
  const Report unknown = report_of({}, {kFixtureReference}, "algo-unknown");
  EXPECT_NE(unknown.md.find("all_reduce at 64 MiB: "), std::string::npos);
  EXPECT_NE(unknown.md.find("Not like for like: algorithm not recorded in this run; the "
                            "reference used NVLSTree"),
            std::string::npos)
      << unknown.md;
  // A run that forced Ring differs from the NVLSTree of the reference.
  Platform ring;
  ring.nccl_algo = "Ring";
  const Report forced = report_of(ring, {kFixtureReference}, "algo-ring");
  EXPECT_NE(forced.md.find("this run set NCCL_ALGO=Ring; the reference used NVLSTree"),
            std::string::npos)
      << forced.md;
  // The same algorithm, named as NCCL_ALGO spells it, is like for like at 64 MiB: no caveat.
  Platform same;
  same.nccl_algo = "nvls_tree";
  const Report like = report_of(same, {kFixtureReference}, "algo-same");
  const std::regex at_64m("- all_reduce at 64 MiB: [^\n]*");
  std::smatch m;
  const std::string section = reference_section(like.md);
  ASSERT_TRUE(std::regex_search(section, m, at_64m)) << section;
  EXPECT_EQ(m.str().find("Not like for like"), std::string::npos) << m.str();
}

TEST(ReportReference, NoMatchIsSaidInWordsAndChartsStayUnchanged) {
  Platform g5;
  g5.instance_type = "g5.48xlarge";
  const Report judged = report_of(g5, {kPublished}, "g5");
  EXPECT_NE(judged.md.find("- no published figure for g5.48xlarge on 2 nodes (all_reduce)"),
            std::string::npos)
      << judged.md;
  // Without a match the charts are exactly those of a report without references.
  const Report plain = report_of(g5, {}, "g5-plain");
  EXPECT_EQ(plain.md.find("## Reference figures"), std::string::npos);
  EXPECT_EQ(judged.busbw_svg, plain.busbw_svg);
  EXPECT_EQ(judged.latency_svg, plain.latency_svg);
  // A different GPU count per node is named.
  Platform four;
  four.gpus_per_node = 4;
  const Report other = report_of(four, {kFixtureReference}, "four");
  EXPECT_NE(other.md.find("- all_reduce at 1 GiB: "), std::string::npos) << other.md;
  EXPECT_EQ(other.md.find("at 1 MiB"), std::string::npos) << other.md;
  Platform six;
  six.gpus_per_node = 6;
  const Report none = report_of(six, {kPublished}, "six");
  EXPECT_NE(none.md.find("no published figure for p5.48xlarge on 2 nodes (all_reduce): the "
                         "published figures there are for 8 GPUs per node, this run has 6"),
            std::string::npos)
      << none.md;
}

TEST(ReportReference, SystemFiguresMatchByGpuModel) {
  // One 8×H100 node without an instance type: the "H100 8-GPU NVSwitch node" peaks apply.
  Platform node;
  node.instance_type = "";
  node.nodes = 1;
  const Report r = report_of(node, {kPublished}, "h100-node");
  const std::string section = reference_section(r.md);
  EXPECT_NE(section.find("all_reduce peak: "), std::string::npos) << section;
  EXPECT_NE(section.find("the stated H100 8-GPU NVSwitch node 1-node peak (480 GB/s, "
                         "NVIDIA/nccl-tests issue #212)"),
            std::string::npos)
      << section;
  EXPECT_NE(section.find("algorithm not recorded in this run; the reference used NVLS"),
            std::string::npos);
  EXPECT_EQ(section.find("H200"), std::string::npos);
  EXPECT_EQ(section.find("GB200"), std::string::npos);
}

TEST(ReportReference, EarlierRunsAsTheReference) {
  TempDir earlier("collbench-reference-earlier");
  Platform before;
  before.run_id = "00000000000000e1";
  before.start_time = "2025-02-01T00:00:00Z";
  before.busbw_peak = 400;
  earlier.write("march/collbench.jsonl", platform_run(before));
  Platform g5 = before;  // another platform in the same directory: not matched
  g5.instance_type = "g5.48xlarge";
  g5.run_id = "00000000000000e2";
  earlier.write("march/g5.jsonl", platform_run(g5));
  const std::string dir = (earlier.path() / "march").string();
  ASSERT_FALSE(is_published_reference_dir(dir));
  ASSERT_TRUE(is_published_reference_dir((kFixtures / kFixtureReference).string()));

  const Platform now;
  const Report r = report_of(now, {dir}, "earlier");
  const std::string section = reference_section(r.md);
  EXPECT_NE(section.find(fmt::format(
                "all_reduce at 1 GiB: {:.0f}% of your run 00000000000000e1 (2025-02-01)",
                100 * run_busbw(now, kGiB) / run_busbw(before, kGiB))),
            std::string::npos)
      << section;
  EXPECT_NE(section.find("all_reduce at 8 B: 1.0× the time of your run 00000000000000e1"),
            std::string::npos)
      << section;
  EXPECT_EQ(section.find("00000000000000e2"), std::string::npos);
  // The earlier curve is drawn as a dashed line with crosses.
  EXPECT_NE(r.busbw_svg.find("class=\"reference-series\""), std::string::npos);
  EXPECT_NE(r.busbw_svg.find("your run 00000000000000e1 (2025-02-01)"), std::string::npos);
}

TEST(ReportReference, BadReferenceFileIsOneLineExit2) {
  TempDir in("collbench-reference-bad-in"), out("collbench-reference-bad-out");
  in.write("p5/collbench.jsonl", platform_run({}));
  ReportOptions o;
  o.inputs = {(in.path() / "p5").string()};
  o.output = (out.path() / "report").string();
  o.reference.dirs = {"reference/bad"};
  try {
    run_in_fixtures(o);
    FAIL() << "a bad reference file was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage);
    const std::string what = e.what();
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    EXPECT_NE(what.find("bad/fixture-bad.json: points[0].busbw_gbps: expected a number"),
              std::string::npos)
        << what;
  }
  // Nothing was written.
  EXPECT_FALSE(fs::exists(out.path() / "report"));
  EXPECT_THROW(parse_reference_file("x.json", "{\"schema\": {\"name\": \"other\"}}"), Error);
  EXPECT_THROW(parse_reference_file("x.json", "{"), Error);
}

TEST(ReportReference, ReferenceFilesReadAsRecords) {
  // Every published file reads, and its points keep their source.
  References refs = load_references({{(kFixtures / kPublished).string()}, false, false}, {});
  ASSERT_GT(refs.published.size(), 20u);
  for (const auto& p : refs.published) {
    EXPECT_FALSE(p.point.source.title.empty()) << p.file;
    EXPECT_TRUE(p.point.busbw_gbps || p.point.time_us) << p.file;
  }
  // The default place is the source tree's results/reference.
  const auto defaults = default_reference_dirs();
  ASSERT_FALSE(defaults.empty());
  EXPECT_TRUE(fs::equivalent(defaults.front(), kFixtures / kPublished));
  const References by_default = load_references({{}, true, false}, {});
  EXPECT_EQ(by_default.published.size(), refs.published.size());
}

// The records list exactly the members the schema allows, so a new member of the format is
// read (or refused) on purpose, not dropped.
TEST(ReportReference, RecordsFollowTheSchema) {
  const auto schema = nlohmann::json::parse(testing::read_file(
      kFixtures / ".." / ".." / ".." / "results" / "schema" / "collbench-reference.schema.json"));
  auto names_of = [](const nlohmann::json& properties) {
    std::set<std::string> names;
    for (const auto& [key, value] : properties.items()) names.insert(key);
    return names;
  };
  auto fields_of = [](auto record) {
    std::set<std::string> names;
    for_each_field<decltype(record)>(
        [&](const auto& field) { names.insert(std::string(field.name)); });
    return names;
  };
  EXPECT_EQ(fields_of(ReferenceFile{}), names_of(schema["properties"]));
  EXPECT_EQ(fields_of(ReferenceSchemaTag{}),
            names_of(schema["properties"]["schema"]["properties"]));
  EXPECT_EQ(fields_of(ReferencePoint{}), names_of(schema["$defs"]["point"]["properties"]));
  EXPECT_EQ(fields_of(ReferenceSource{}), names_of(schema["$defs"]["source"]["properties"]));
}

}  // namespace
}  // namespace collbench::report::reference_tests
