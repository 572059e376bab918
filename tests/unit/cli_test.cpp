#include "collbench/cli.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <initializer_list>
#include <string>
#include <vector>

#include "backends/catalog.h"
#include "collbench/error.h"
#include "collbench/reporter.h"
#include "collectives/collectives.h"

namespace collbench {
namespace {

ParseResult parse(std::initializer_list<const char*> args) {
  std::vector<const char*> argv{"collbench"};
  argv.insert(argv.end(), args.begin(), args.end());
  return parse_command_line(static_cast<int>(argv.size()), argv.data(), all_specs(),
                            backend_catalog());
}

/// The usage error message for `args`; fails the test when parsing succeeds.
std::string usage_error(std::initializer_list<const char*> args) {
  try {
    parse(args);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage);
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << "one line: " << message;
    return message;
  }
  ADD_FAILURE() << "expected a usage error";
  return "";
}

TEST(Cli, DefaultsMatchNcclTestsExceptTheAggregate) {
  const Options o = parse({}).options;
  EXPECT_EQ(o.tests, std::vector<std::string>{"all_reduce"});
  EXPECT_EQ(o.min_bytes, 32u << 20);
  EXPECT_EQ(o.max_bytes, 32u << 20);
  EXPECT_EQ(o.iters, 20);
  EXPECT_EQ(o.warmup, 5);
  EXPECT_EQ(o.check, 1);
  EXPECT_EQ(o.dtypes, std::vector<DType>{DType::kFloat});
  EXPECT_EQ(o.ops, std::vector<ReduceOp>{ReduceOp::kSum});
  EXPECT_EQ(o.aggregate, RankAggregate::kSlowest);
  EXPECT_EQ(o.timeout_s, 300);
}

TEST(Cli, NcclTestsShortOptions) {
  const Options o = parse({"all_reduce,all_gather",
                           "-b",
                           "8",
                           "-e",
                           "256M",
                           "-f",
                           "2",
                           "-n",
                           "50",
                           "-w",
                           "3",
                           "-c",
                           "0",
                           "-d",
                           "half",
                           "-o",
                           "max",
                           "-r",
                           "1",
                           "-z",
                           "1",
                           "-a",
                           "1"})
                        .options;
  EXPECT_EQ(o.tests, (std::vector<std::string>{"all_reduce", "all_gather"}));
  EXPECT_EQ(o.min_bytes, 8u);
  EXPECT_EQ(o.max_bytes, 256u << 20);
  EXPECT_EQ(o.step_factor, 2u);
  EXPECT_EQ(o.iters, 50);
  EXPECT_EQ(o.warmup, 3);
  EXPECT_EQ(o.check, 0);
  EXPECT_EQ(o.dtypes, std::vector<DType>{DType::kHalf});
  EXPECT_EQ(o.ops, std::vector<ReduceOp>{ReduceOp::kMax});
  EXPECT_EQ(o.root, 1);
  EXPECT_TRUE(o.blocking);
  EXPECT_EQ(o.aggregate, RankAggregate::kMean);
}

TEST(Cli, LongOptionsAndAttachedValues) {
  const Options o = parse({"bw",      "--minbytes=1K", "--maxbytes", "1M",        "--iters",
                           "7",       "--warmup",      "0",          "--backend", "mpi",
                           "--jsonl", "out.jsonl",     "--timeout",  "2.5",       "--pairs",
                           "all",     "--window",      "16",         "-i",        "64K"})
                        .options;
  EXPECT_EQ(o.min_bytes, 1024u);
  EXPECT_EQ(o.iters, 7);
  EXPECT_EQ(o.warmup, 0);
  EXPECT_EQ(o.backend, "mpi");
  EXPECT_EQ(o.jsonl, "out.jsonl");
  EXPECT_DOUBLE_EQ(o.timeout_s, 2.5);
  EXPECT_EQ(o.pairs, PairMode::kAll);
  EXPECT_EQ(o.window, 16);
  EXPECT_EQ(o.step_bytes, 64u << 10);
  EXPECT_EQ(parse({"-b8", "-e16"}).options.max_bytes, 16u);
}

TEST(Cli, AllExpandsTestsDtypesAndOps) {
  const Options o = parse({"all", "-d", "all", "-o", "all"}).options;
  EXPECT_EQ(o.tests.size(), all_specs().size());
  EXPECT_TRUE(o.all_tests);
  EXPECT_FALSE(parse({"latency,bw"}).options.all_tests);
  EXPECT_EQ(o.dtypes.size(), all_dtypes().size());
  EXPECT_TRUE(o.all_dtypes);
  EXPECT_EQ(o.ops.size(), 5u);
  EXPECT_EQ(parse({"-d", "float,half"}).options.dtypes,
            (std::vector<DType>{DType::kFloat, DType::kHalf}));
}

TEST(Cli, HelpAndVersionAreTextsNotErrors) {
  const ParseResult help = parse({"--help"});
  EXPECT_NE(help.exit_text.find("Examples:"), std::string::npos);
  EXPECT_NE(help.exit_text.find("mpirun -np"), std::string::npos);
  EXPECT_NE(help.exit_text.find("powers of 1024"), std::string::npos);
  EXPECT_FALSE(parse({"--version"}).exit_text.empty());
}

TEST(Cli, PrecisionAsAPercentageOrAFractionWithATimeBudget) {
  const Options fixed = parse({}).options;
  EXPECT_FALSE(fixed.precision);
  const Options percent = parse({"--precision", "1%", "--max-time", "2.5"}).options;
  ASSERT_TRUE(percent.precision);
  EXPECT_DOUBLE_EQ(*percent.precision, 0.01);
  EXPECT_DOUBLE_EQ(percent.max_time_s, 2.5);
  const Options fraction = parse({"--precision=0.05"}).options;
  ASSERT_TRUE(fraction.precision);
  EXPECT_DOUBLE_EQ(*fraction.precision, 0.05);
  EXPECT_DOUBLE_EQ(fraction.max_time_s, 10);
}

TEST(Cli, PrecisionAndMaxTimeRefusals) {
  for (const char* bad : {"0%", "1", "51%", "-1%", "abc", "1%%", "nan", "%"}) {
    EXPECT_NE(usage_error({"--precision", bad}).find("--precision"), std::string::npos) << bad;
  }
  for (const char* bad : {"0", "-1", "inf", "1s", "2e6"}) {
    EXPECT_NE(usage_error({"--precision", "1%", "--max-time", bad}).find("--max-time"),
              std::string::npos)
        << bad;
  }
  EXPECT_NE(usage_error({"--max-time", "5"}).find("add --precision"), std::string::npos);
  EXPECT_NE(usage_error({"--precision", "1%", "-z", "1"}).find("-z"), std::string::npos);
  EXPECT_NE(usage_error({"--precision", "1%", "-G", "2"}).find("-G"), std::string::npos);
}

TEST(Cli, SizesInTheWrongOrder) {
  const std::string m = usage_error({"-b", "1G", "-e", "1K"});
  EXPECT_NE(m.find("-b 1G"), std::string::npos) << m;
  EXPECT_NE(m.find("-e 1K"), std::string::npos) << m;
}

TEST(Cli, FactorBelowTwo) {
  for (const char* f : {"1", "0", "-2", "x", "1.5"}) {
    const std::string m = usage_error({"-f", f});
    EXPECT_NE(m.find("-f"), std::string::npos) << m;
    EXPECT_NE(m.find("at least 2"), std::string::npos) << m;
  }
}

TEST(Cli, ZeroIterations) { EXPECT_NE(usage_error({"-n", "0"}).find("-n 0"), std::string::npos); }

TEST(Cli, UnknownDtypeListsTheAcceptedOnes) {
  const std::string m = usage_error({"-d", "float17"});
  EXPECT_NE(m.find("float17"), std::string::npos);
  EXPECT_NE(m.find("bfloat16"), std::string::npos) << m;
}

TEST(Cli, UnknownOp) {
  const std::string m = usage_error({"-o", "foo"});
  EXPECT_NE(m.find("foo"), std::string::npos);
  EXPECT_NE(m.find("sum, prod, max, min, avg"), std::string::npos) << m;
}

TEST(Cli, UnknownTestListsTheKnownOnes) {
  const std::string m = usage_error({"all_reduse"});
  EXPECT_NE(m.find("all_reduse"), std::string::npos);
  EXPECT_NE(m.find("reduce_scatter"), std::string::npos) << m;
}

TEST(Cli, NegativeAndUnparseableSizes) {
  for (auto args : {std::initializer_list<const char*>{"-b", "-8"},
                    {"-e", "abc"},
                    {"-b", "1X"},
                    {"-e", "-1K"},
                    {"-i", "0"}}) {
    const std::string m = usage_error(args);
    EXPECT_FALSE(m.empty());
  }
  EXPECT_NE(usage_error({"-e", "12Q"}).find("12Q"), std::string::npos);
}

TEST(Cli, UnknownOptionAndMissingValue) {
  EXPECT_NE(usage_error({"--frobnicate"}).find("frobnicate"), std::string::npos);
  EXPECT_NE(usage_error({"-b"}).find("minbytes"), std::string::npos);
  EXPECT_FALSE(usage_error({"--timeout", "-1"}).empty());
  EXPECT_FALSE(usage_error({"--backend", "gloo"}).empty());
  EXPECT_FALSE(usage_error({"--pairs", "some"}).empty());
  EXPECT_FALSE(usage_error({"-G", "3", "-z", "1"}).empty());
}

TEST(Cli, BufferPolicyIsRotateOrFixedAndEachBackendNamesItsDefault) {
  EXPECT_FALSE(parse({}).options.buffers) << "unset until the backend that runs is known";
  EXPECT_EQ(parse({"--buffers", "fixed"}).options.buffers, BufferPolicy::kFixed);
  EXPECT_EQ(parse({"--buffers=rotate"}).options.buffers, BufferPolicy::kRotate);
  for (const char* bad : {"warm", "Fixed", "rotate,fixed"}) {
    const std::string m = usage_error({"--buffers", bad});
    EXPECT_NE(m.find("--buffers"), std::string::npos) << m;
    EXPECT_NE(m.find("rotate"), std::string::npos) << m;
    EXPECT_NE(m.find("fixed"), std::string::npos) << m;
  }
  EXPECT_NE(usage_error({"--buffers", ""}).find("--buffers"), std::string::npos);
  // Every backend rotates by default: nccl for nccl-tests parity, the host backends so that
  // numbers measured before the option existed stay comparable.
  for (const BackendDescriptor* backend : backend_catalog()) {
    EXPECT_EQ(backend->buffers, BufferPolicy::kRotate) << backend->name;
  }
  // Resolved once, from the backend that runs: its default where none was given, else as given.
  BackendDescriptor fixed_by_default = ofi_backend_descriptor();
  fixed_by_default.buffers = BufferPolicy::kFixed;
  EXPECT_EQ(with_backend_defaults(parse({}).options, fixed_by_default).buffers,
            BufferPolicy::kFixed);
  EXPECT_EQ(with_backend_defaults(parse({"--buffers", "rotate"}).options, fixed_by_default).buffers,
            BufferPolicy::kRotate);
}

TEST(Cli, BackendOptionsAreCheckedAgainstTheBackendThatRuns) {
  const Options o = parse({"-R", "1", "--require-net", "efa"}).options;
  const BackendArgs ofi = backend_args(o, ofi_backend_descriptor(), backend_catalog());
  EXPECT_EQ(ofi.integer(backend_option::kRegisterBuffers), 1);
  EXPECT_EQ(ofi.text(backend_option::kRequireNet), "efa");
  const BackendArgs nccl = backend_args(o, nccl_backend_descriptor(), backend_catalog());
  EXPECT_EQ(nccl.integer(backend_option::kDevice), -1) << "undeclared on the command line: default";
  try {
    backend_args(o, mpi_backend_descriptor(), backend_catalog());
    FAIL() << "mpi declares neither -R nor --require-net";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage);
    EXPECT_NE(std::string(e.what()).find("-R 1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--backend nccl or ofi"), std::string::npos) << e.what();
  }
}

TEST(Cli, BackendOptionValuesFollowTheDeclaringBackend) {
  // Named with --backend: checked at once against that backend's range.
  std::string m = usage_error({"-R", "2", "--backend", "ofi"});
  EXPECT_NE(m.find("-R 2"), std::string::npos) << m;
  EXPECT_NE(m.find("0 to 1 for the ofi backend"), std::string::npos) << m;
  EXPECT_NO_THROW(parse({"-R", "2", "--backend", "nccl"}));
  // Without --backend a value some backend accepts passes; one that none accepts does not.
  EXPECT_NO_THROW(parse({"-R", "2"}));
  EXPECT_NE(usage_error({"-R", "3"}).find("-R 3"), std::string::npos);
  m = usage_error({"--device", "1", "--backend", "mpi"});
  EXPECT_NE(m.find("--device 1"), std::string::npos) << m;
  EXPECT_NE(m.find("--backend nccl"), std::string::npos) << m;
  m = usage_error({"-G", "2", "--backend", "ofi"});
  EXPECT_NE(m.find("-G 2"), std::string::npos) << m;
  EXPECT_NE(m.find("--backend nccl"), std::string::npos) << m;
}

TEST(Cli, HelpNamesTheBackendsThatTakeEachOption) {
  const std::string help = parse({"--help"}).exit_text;
  EXPECT_NE(help.find("--register"), std::string::npos);
  EXPECT_NE(help.find("[--backend nccl or ofi]"), std::string::npos) << help;
  EXPECT_NE(help.find("nccl, mpi, ofi"), std::string::npos) << help;
}

TEST(Cli, NcclTestsFlagsWithNcclTestsMeaning) {
  const Options o =
      parse({"-m", "4", "-N", "0",  "-u", "3",        "-C", "1", "-S", "1", "-M", "1", "-I", "1",
             "-K", "2", "-T", "12", "-J", "out.json", "-z", "3", "-t", "1", "-g", "1", "-p", "0"})
          .options;
  EXPECT_EQ(o.agg_iters, 4);
  EXPECT_EQ(o.run_cycles, 0) << "0: until interrupted";
  EXPECT_EQ(o.misalign, 3);
  EXPECT_TRUE(o.report_cputime);
  EXPECT_TRUE(o.report_timestamps);
  EXPECT_TRUE(o.memory_report);
  EXPECT_EQ(o.per_iter_skip, 2);
  EXPECT_DOUBLE_EQ(o.timeout_s, 12) << "-T is nccl-tests' --timeout";
  EXPECT_EQ(o.nccl_tests_json, "out.json");
  EXPECT_EQ(o.blocking, 3);
  EXPECT_EQ(measurement_mode(o), MeasureMode::kBlocking);
  EXPECT_EQ(o.ranks_per_process(), 1);
}

TEST(Cli, ThreadsAndGpusPerProcessCountRanksAsNcclTests) {
  const Options o = parse({"-t", "2", "-g", "4", "-p", "1"}).options;
  EXPECT_EQ(o.threads_per_process, 2);
  EXPECT_EQ(o.gpus_per_thread, 4);
  EXPECT_EQ(o.ranks_per_process(), 8);
  EXPECT_EQ(parse({"--ngpus", "8"}).options.ranks_per_process(), 8);
  EXPECT_NE(usage_error({"-g", "0"}).find("1 to 64 GPUs"), std::string::npos);
  EXPECT_NE(usage_error({"-t", "65"}).find("1 to 64 threads"), std::string::npos);
  EXPECT_NE(usage_error({"-t", "8", "-g", "16"}).find("128 ranks per process"), std::string::npos);
  // Groups are formed from processes.
  EXPECT_NE(usage_error({"-g", "2", "--split", "pairs"}).find("--split with -t 1 -g 2"),
            std::string::npos);
}

TEST(Cli, FlagsCollbenchCannotHonourAreRefusedNotIgnored) {
  EXPECT_NE(usage_error({"-p", "2"}).find("-p 2"), std::string::npos);
  EXPECT_NE(usage_error({"-z", "4"}).find("0, 1, 2 or 3"), std::string::npos);
  EXPECT_NE(usage_error({"-n", "5", "-K", "5"}).find("-K 5"), std::string::npos);
  EXPECT_NE(usage_error({"-G", "2", "-z", "2"}).find("-z 2"), std::string::npos);
}

TEST(Cli, MinimumBusbwFromTheFlagAndFromNcclTestsVariable) {
  EXPECT_DOUBLE_EQ(parse({"--min-busbw", "350.5"}).options.min_busbw.value_or(0), 350.5);
  EXPECT_NE(usage_error({"--min-busbw", "fast"}).find("GB/s"), std::string::npos);
  ::setenv("NCCL_TESTS_MIN_BW", "100", 1);
  EXPECT_DOUBLE_EQ(parse({}).options.nccl_tests_min_bw.value_or(0), 100);
  ::setenv("NCCL_TESTS_MIN_BW", "-3", 1);
  EXPECT_NE(usage_error({}).find("NCCL_TESTS_MIN_BW -3"), std::string::npos);
  ::unsetenv("NCCL_TESTS_MIN_BW");
  // nccl-tests fails only below 90% of its variable; --min-busbw means what it says.
  EXPECT_EQ(busbw_meets(95, std::nullopt, 100), true);
  EXPECT_EQ(busbw_meets(89, std::nullopt, 100), false);
  EXPECT_EQ(busbw_meets(95, 100, std::nullopt), false);
  EXPECT_EQ(busbw_meets(95, std::nullopt, std::nullopt), std::nullopt);
}

TEST(Cli, RootMustBeARankOfTheJob) {
  const Options o = parse({"broadcast", "-r", "9"}).options;
  try {
    validate_for_world(o, 4, all_specs());
    FAIL() << "expected a usage error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage);
    EXPECT_NE(std::string(e.what()).find("-r 9"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("0 to 3"), std::string::npos);
  }
  EXPECT_NO_THROW(validate_for_world(o, 10, all_specs()));
}

TEST(Cli, PointToPointNeedsTwoRanks) {
  const Options o = parse({"latency"}).options;
  try {
    validate_for_world(o, 1, all_specs());
    FAIL() << "expected a usage error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage);
    EXPECT_NE(std::string(e.what()).find("at least 2 ranks"), std::string::npos);
  }
  EXPECT_NO_THROW(validate_for_world(parse({"all_reduce"}).options, 1, all_specs()));
}

TEST(Cli, ListsThatNameNothingAreRefused) {
  EXPECT_NE(usage_error({""}).find("names nothing"), std::string::npos);
  EXPECT_NE(usage_error({","}).find("names nothing"), std::string::npos);
  EXPECT_NE(usage_error({"-d", ","}).find("-d ','"), std::string::npos);
  EXPECT_NE(usage_error({"-o", ",,"}).find("-o ',,'"), std::string::npos);
  // Given but empty is not the default: the value was lost somewhere.
  EXPECT_NE(usage_error({"-d", ""}).find("empty value"), std::string::npos);
  EXPECT_NE(usage_error({"-n", ""}).find("empty value"), std::string::npos);
  EXPECT_NE(usage_error({"--jsonl", ""}).find("--jsonl"), std::string::npos);
  EXPECT_NE(usage_error({"-J", ""}).find("''"), std::string::npos);
  EXPECT_NE(usage_error({"--backend", ""}).find("empty value"), std::string::npos);
}

TEST(Cli, DuplicatesAreRefusedNamingTheItem) {
  EXPECT_NE(usage_error({"all_reduce,all_reduce"}).find("all_reduce is named twice"),
            std::string::npos);
  EXPECT_NE(usage_error({"all_reduce", "all_reduce"}).find("all_reduce is named twice"),
            std::string::npos);
  EXPECT_NE(usage_error({"all,bw"}).find("bw is named twice"), std::string::npos);
  EXPECT_NE(usage_error({"-d", "float,float"}).find("float is named twice"), std::string::npos);
  EXPECT_NE(usage_error({"-d", "all,double"}).find("double is named twice"), std::string::npos);
  EXPECT_NE(usage_error({"-o", "max,sum,max"}).find("max is named twice"), std::string::npos);
  EXPECT_EQ(parse({"-d", "float,double", "-o", "sum,max"}).options.dtypes.size(), 2u);
}

TEST(Cli, BoundsAreStated) {
  EXPECT_NE(usage_error({"-n", "100000001"}).find("1 to 100000000"), std::string::npos);
  EXPECT_NE(usage_error({"-f", "2000000"}).find("1048576"), std::string::npos);
  EXPECT_NE(usage_error({"-m", "2000000"}).find("1 to 1048576"), std::string::npos);
  EXPECT_NE(usage_error({"-e", "2000000T"}).find("2^60"), std::string::npos);
  EXPECT_NE(usage_error({"-b", "1", "-e", "1T", "-i", "1"}).find("1000000"), std::string::npos);
}

TEST(Cli, SizeRangesThatMeasureNothingAreRefused) {
  const auto refused = [](std::initializer_list<const char*> args, int nranks) {
    try {
      validate_for_world(parse(args).options, nranks, all_specs());
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::kUsage);
      return std::string(e.what());
    }
    return std::string();
  };
  // 0 times -f stays 0: the sweep is 0 B alone.
  EXPECT_NE(refused({"-b", "0", "-e", "1K", "-f", "2"}, 2).find("nothing would be measured"),
            std::string::npos);
  EXPECT_NE(refused({"-b", "1", "-e", "7", "-d", "double"}, 1).find("raise -e to 8"),
            std::string::npos);
  // alltoall needs 16 bytes per rank (nccl-tests' unit): 32 B on 4 ranks holds none.
  EXPECT_NE(refused({"alltoall", "-b", "8", "-e", "32", "-f", "2"}, 4).find("raise -e to 64"),
            std::string::npos);
  EXPECT_EQ(refused({"-b", "0", "-e", "1K", "-i", "256"}, 2), "");
  EXPECT_EQ(refused({"alltoall", "-b", "64", "-e", "64"}, 4), "");
}

TEST(Cli, AllOnOneRankLeavesThePointToPointTestsToTheRunner) {
  EXPECT_NO_THROW(validate_for_world(parse({"all", "-b", "8", "-e", "8"}).options, 1, all_specs()));
}

}  // namespace
}  // namespace collbench
