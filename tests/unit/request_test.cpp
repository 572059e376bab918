// MeasureRequest: the one typed form of what a campaign or the hunt asks collbench to measure,
// its one argv writer, and its agreement with collbench's own command line.
#include "collbench/request.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <vector>

#include "backends/catalog.h"
#include "collbench/cli.h"
#include "collbench/error.h"
#include "collbench/text.h"
#include "collectives/collectives.h"

namespace collbench {
namespace {

// Every field set, to a value none of collbench's defaults has.
MeasureRequest full_request() {
  return MeasureRequest{
      .tests = {"all_reduce", "all_gather"},
      .min_bytes = 4096,
      .max_bytes = 64 << 20,  // above collbench's default -b
      .step_factor = 4,
      .step_bytes = std::nullopt,
      .dtypes = AllOr<DType>{false, {DType::kHalf, DType::kInt32}},
      .ops = AllOr<ReduceOp>{false, {ReduceOp::kMax}},
      .root = 1,
      .check = 2,
      .iters = 7,
      .warmup = 3,
      .pairs = PairMode::kAll,
      .buffers = BufferPolicy::kFixed,
      .window = 8,
      .blocking = 2,
      .seed = 7,
      .timeout_s = 12.5,
      .precision = 0.05,
      .max_time_s = 3,
      .backend = "mpi",
      .labels = std::map<std::string, std::string>{{"variant", "a"}, {"site", "lab"}},
      .split = "sample:3",
      .extra_args = {"-G", "2"}};
}

// Reads to_argv()'s words back through set_from_text(), the way the hunt reads its options.
MeasureRequest read_back(const std::vector<std::string>& argv) {
  MeasureRequest r;
  std::size_t i = 0;
  if (!argv.empty() && argv[0][0] != '-') r.tests = split(argv[i++], ',');
  for (; i + 1 < argv.size(); i += 2) {
    if (!set_from_text(r, argv[i], argv[i + 1])) {
      r.extra_args.assign(argv.begin() + static_cast<std::ptrdiff_t>(i), argv.end());
      break;
    }
  }
  return r;
}

TEST(MeasureRequest, ArgvHoldsTheSetFieldsInOrderThenTheExtraArguments) {
  EXPECT_TRUE(to_argv(MeasureRequest{}).empty());
  EXPECT_EQ(to_argv(full_request()), (std::vector<std::string>{"all_reduce,all_gather",
                                                               "-b",
                                                               "4096",
                                                               "-e",
                                                               "67108864",
                                                               "-f",
                                                               "4",
                                                               "-d",
                                                               "half,int32",
                                                               "-o",
                                                               "max",
                                                               "-r",
                                                               "1",
                                                               "-c",
                                                               "2",
                                                               "-n",
                                                               "7",
                                                               "-w",
                                                               "3",
                                                               "--pairs",
                                                               "all",
                                                               "--buffers",
                                                               "fixed",
                                                               "--window",
                                                               "8",
                                                               "-z",
                                                               "2",
                                                               "--seed",
                                                               "7",
                                                               "--timeout",
                                                               "12.5",
                                                               "--precision",
                                                               "0.05",
                                                               "--max-time",
                                                               "3",
                                                               "--backend",
                                                               "mpi",
                                                               "--label",
                                                               "site=lab,variant=a",
                                                               "--split",
                                                               "sample:3",
                                                               "-G",
                                                               "2"}));
  MeasureRequest all;
  all.dtypes = AllOr<DType>{true, {}};
  all.ops = AllOr<ReduceOp>{true, {}};
  EXPECT_EQ(to_argv(all), (std::vector<std::string>{"-d", "all", "-o", "all"}));
}

TEST(MeasureRequest, EveryFieldReadsBackFromWhatToArgvWrote) {
  EXPECT_EQ(read_back(to_argv(full_request())), full_request());
  MeasureRequest step;
  step.min_bytes = 0;
  step.max_bytes = 64;
  step.step_bytes = 8;
  step.dtypes = AllOr<DType>{true, {}};
  EXPECT_EQ(read_back(to_argv(step)), step);
}

TEST(MeasureRequest, TextIsReadAsTheCommandLineGivesIt) {
  MeasureRequest r;
  EXPECT_TRUE(set_from_text(r, "--minbytes", "1M"));
  EXPECT_TRUE(set_from_text(r, "-e", "2G"));
  EXPECT_TRUE(set_from_text(r, "--precision", "2%"));
  EXPECT_TRUE(set_from_text(r, "-T", "0"));
  EXPECT_TRUE(set_from_text(r, "-d", "fp16,bf16"));
  EXPECT_EQ(r.min_bytes, 1u << 20);
  EXPECT_EQ(r.max_bytes, 2ull << 30);
  EXPECT_DOUBLE_EQ(*r.precision, 0.02);
  EXPECT_DOUBLE_EQ(*r.timeout_s, 0);
  EXPECT_EQ(r.dtypes, (AllOr<DType>{false, {DType::kHalf, DType::kBfloat16}}));
  EXPECT_TRUE(set_from_text(r, "--buffers", "fixed"));
  EXPECT_TRUE(set_from_text(r, "--root", "3"));
  EXPECT_EQ(r.buffers, BufferPolicy::kFixed);
  EXPECT_EQ(r.root, 3);
  EXPECT_TRUE(set_from_text(r, "--split", "sample:4"));
  EXPECT_EQ(r.split, "sample:4");
  EXPECT_FALSE(set_from_text(r, "-G", "2"));  // not a field: the caller's to handle
}

TEST(MeasureRequest, BadTextNamesTheFlagAndTheAcceptedForm) {
  const std::vector<std::pair<std::string, std::string>> bad{
      {"-b", "lots"},    {"-f", "2.5"},         {"-n", "-1"},          {"--timeout", "soon"},
      {"-d", ""},        {"-d", "float,,half"}, {"-o", "median"},      {"--precision", "%"},
      {"--backend", ""}, {"--pairs", "some"},   {"--buffers", "warm"}, {"--buffers", "Rotate"},
      {"-r", "-1"},      {"--window", "many"}};
  for (const auto& [flag, text] : bad) {
    MeasureRequest r;
    try {
      set_from_text(r, flag, text);
      ADD_FAILURE() << flag << " " << text << " was accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kUsage);
      EXPECT_EQ(std::string(e.what()).rfind(flag + " ", 0), 0u) << e.what();
      EXPECT_NE(std::string(e.what()).find("expected"), std::string::npos) << e.what();
    }
  }
}

TEST(MeasureRequest, AVariantReplacesWhatItSetsAndSizesAsAWhole) {
  MeasureRequest base;
  base.min_bytes = 8;
  base.max_bytes = 1 << 20;
  base.step_factor = 2;
  base.iters = 50;
  base.check = 0;
  base.extra_args = {"--pairs", "all"};
  MeasureRequest over;
  over.min_bytes = 1024;
  over.max_bytes = 4096;
  over.step_bytes = 1024;
  over.iters = 5;
  over.extra_args = {"--window", "8"};
  const MeasureRequest m = merged(base, over);
  EXPECT_EQ(m.min_bytes, 1024u);
  EXPECT_EQ(m.step_bytes, 1024u);
  EXPECT_FALSE(m.step_factor) << "the variant's sizes replace the campaign's as one block";
  EXPECT_EQ(m.iters, 5);
  EXPECT_EQ(m.check, 0) << "a field the variant leaves unset keeps the campaign's";
  EXPECT_EQ(m.extra_args, (std::vector<std::string>{"--pairs", "all", "--window", "8"}));
  EXPECT_EQ(merged(base, MeasureRequest{}), base);
}

// The request is a second spelling of collbench's options only if collbench reads it back as
// meant: every field, written by to_argv(), parses to the same values on collbench's command
// line. A field whose flag collbench does not take, or takes differently, fails here.
TEST(MeasureRequest, CollbenchParsesWhatToArgvWrites) {
  MeasureRequest r = full_request();
  r.extra_args.clear();
  // -z times single operations, which --precision's batches exclude; it is tried alone below.
  r.blocking.reset();
  std::vector<std::string> words{"collbench"};
  for (auto& w : to_argv(r)) words.push_back(w);
  std::vector<const char*> argv;
  for (const auto& w : words) argv.push_back(w.c_str());
  const Options o =
      parse_command_line(static_cast<int>(argv.size()), argv.data(), all_specs(), backend_catalog())
          .options;
  EXPECT_EQ(o.tests, r.tests);
  EXPECT_EQ(o.min_bytes, *r.min_bytes);
  EXPECT_EQ(o.max_bytes, *r.max_bytes);
  EXPECT_EQ(o.step_factor, *r.step_factor);
  EXPECT_EQ(o.dtypes, r.dtypes->items);
  EXPECT_EQ(o.ops, r.ops->items);
  EXPECT_EQ(o.check, *r.check);
  EXPECT_EQ(o.iters, *r.iters);
  EXPECT_EQ(o.warmup, *r.warmup);
  EXPECT_DOUBLE_EQ(o.timeout_s, *r.timeout_s);
  EXPECT_DOUBLE_EQ(*o.precision, *r.precision);
  EXPECT_DOUBLE_EQ(o.max_time_s, *r.max_time_s);
  EXPECT_EQ(o.backend, *r.backend);
  EXPECT_EQ(o.root, *r.root);
  EXPECT_EQ(o.pairs, *r.pairs);
  EXPECT_EQ(o.buffers, r.buffers);
  EXPECT_EQ(o.window, *r.window);
  EXPECT_EQ(o.split_text, *r.split);
  EXPECT_EQ(o.request.labels, r.labels) << "a field without an option of collbench's own";
}

// Whether any option collbench compares between ranks differs between `a` and `b`.
bool differs(const Options& a, const Options& b) {
  bool differ = false;
  std::apply(
      [&](const auto&... field) {
        ((differ = differ || !(a.*field.member == b.*field.member)), ...);
      },
      Options::fields());
  return differ;
}

// A new field is checked with no edit here: alone on collbench's command line, under each of its
// names, it is accepted and changes what collbench measures.
TEST(MeasureRequest, EachFieldAloneIsAnOptionOfCollbench) {
  const auto parse = [](const std::vector<std::string>& words) {
    std::vector<const char*> argv{"collbench"};
    for (const auto& w : words) argv.push_back(w.c_str());
    return parse_command_line(static_cast<int>(argv.size()), argv.data(), all_specs(),
                              backend_catalog())
        .options;
  };
  MeasureRequest full = full_request();
  full.step_bytes = 512;  // -f and -i exclude each other, but each is tried alone
  std::apply(
      [&](const auto&... field) {
        const auto check = [&](const auto& f) {
          // What the field needs beside it, in the baseline too: collbench checks a range as a
          // whole, and --max-time bounds --precision.
          MeasureRequest baseline;
          if (f.group == "sizes") {
            baseline.min_bytes = full.min_bytes;
            baseline.max_bytes = full.max_bytes;
            baseline.*f.member = std::nullopt;
          }
          if (f.flag() == "--max-time") baseline.precision = full.precision;
          MeasureRequest one = baseline;
          one.*f.member = full.*f.member;
          const Options before = parse(to_argv(baseline));
          const std::vector<std::string> words = to_argv(one);
          for (const std::string& name : split(f.names, ',')) {
            std::vector<std::string> spelled = words;
            for (auto& w : spelled) {
              if (w == f.flag()) w = name;
            }
            EXPECT_TRUE(differs(parse(spelled), before)) << name << " changed nothing";
          }
        };
        (check(field), ...);
      },
      MeasureRequest::fields());
}

}  // namespace
}  // namespace collbench
