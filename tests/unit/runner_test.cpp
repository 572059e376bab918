// The runner end to end on in-process thread ranks: every test, dtype and op verified; faults
// are caught; cross-rank aggregation names the slowest rank; point-to-point pairing; notes.
#include "collbench/runner.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "collbench/error.h"
#include "collbench/preflight.h"
#include "collbench/sizes.h"
#include "collectives/collectives.h"
#include "decorators.h"
#include "thread_world.h"

namespace collbench {
namespace {

using testing::Faults;
using testing::FaultyBackend;
using testing::ThreadWorld;

class CollectingReporter : public Reporter {
 public:
  void context(const RunContext&) override {}
  void row(const ResultRow& row) override { rows.push_back(row); }
  void note(std::string_view text) override { notes.emplace_back(text); }
  void end_size() override { ++sizes; }
  std::vector<ResultRow> rows;
  std::vector<std::string> notes;
  int sizes = 0;
};

struct JobResult {
  RunTotals totals;
  CollectingReporter reporter;  // rank 0's
};

Options small_options(std::vector<std::string> tests) {
  Options o;
  o.tests = std::move(tests);
  o.min_bytes = 8;
  o.max_bytes = 4096;
  o.step_factor = 8;
  o.iters = 3;
  o.warmup = 1;
  o.check = 1;
  o.timeout_s = 0;
  return o;
}

std::vector<const CollectiveSpec*> specs_of(const Options& o) {
  std::vector<const CollectiveSpec*> out;
  for (const auto& t : o.tests) out.push_back(find_spec(all_specs(), t));
  return out;
}

/// Runs `options` on `nranks` thread ranks; `faults(rank)` says what to break on each rank.
JobResult run_job(int nranks, const Options& options,
                  const std::function<Faults(int)>& faults = nullptr,
                  std::vector<std::string> hosts = {}) {
  ThreadWorld world(nranks, std::move(hosts));
  JobResult result;
  std::vector<RunTotals> totals(static_cast<std::size_t>(nranks));
  world.run([&](int rank) {
    auto bootstrap = world.make_bootstrap(rank);
    FaultyBackend backend(world.make_backend(rank), faults ? faults(rank) : Faults{});
    CollectingReporter ignored;
    Reporter& reporter = rank == 0 ? static_cast<Reporter&>(result.reporter) : ignored;
    preflight(options, *bootstrap, backend, specs_of(options));
    Runner runner(options, *bootstrap, backend, reporter, nullptr, "0123456789abcdef");
    totals[static_cast<std::size_t>(rank)] = runner.run(specs_of(options));
  });
  for (const auto& t : totals)
    EXPECT_EQ(t.wrong, totals.front().wrong) << "every rank learns the total";
  result.totals = totals.front();
  return result;
}

std::size_t expected_rows(const Options& o, int nranks) {
  std::size_t rows = 0;
  for (const auto* spec : specs_of(o)) {
    const std::size_t ops = spec->reduces ? o.ops.size() : 1;
    for (DType t : o.dtypes) {
      for (std::uint64_t size :
           size_sequence(o.min_bytes, o.max_bytes, o.step_factor, o.step_bytes)) {
        if (spec->layout(size / size_of(t), nranks, size_of(t)).param_count == 0) continue;
        const std::size_t pairs = spec->kind == TestKind::kPointToPoint
                                      ? (o.pairs == PairMode::kAll ? nranks / 2 : 1)
                                      : 1;
        rows += ops * pairs * (spec->has_in_place ? 2 : 1);
      }
    }
  }
  return rows;
}

class EveryCombination : public ::testing::TestWithParam<int> {};

TEST_P(EveryCombination, VerifiesEveryTestDtypeAndOp) {
  const int n = GetParam();
  Options o = small_options({});
  for (const auto* spec : all_specs()) {
    if (spec->kind == TestKind::kCollective || n >= 2) o.tests.emplace_back(spec->name);
  }
  o.dtypes.assign(all_dtypes().begin(), all_dtypes().end());
  o.all_dtypes = true;
  o.ops.assign(all_ops().begin(), all_ops().end());
  o.root = n - 1;
  const JobResult r = run_job(n, o);
  EXPECT_EQ(r.totals.wrong, 0);
  ASSERT_EQ(r.reporter.rows.size(), expected_rows(o, n));
  for (const auto& row : r.reporter.rows) {
    EXPECT_EQ(row.status, RowStatus::kOk) << row.test << " " << name(row.dtype);
    ASSERT_TRUE(row.wrong);
    EXPECT_EQ(*row.wrong, 0);
    EXPECT_EQ(row.nranks, n);
    EXPECT_GT(row.time_us->reported, 0);
    EXPECT_EQ(row.time_us->per_iteration.n, 3u);
    if (row.test == "broadcast" || row.test == "reduce") {
      EXPECT_EQ(row.root, n - 1);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, EveryCombination, ::testing::Values(1, 2, 3, 4));

TEST(Runner, RowsRecordTheAlgorithmTheLibraryReports) {
  // A library that switches from RING/LL to TREE/SIMPLE at 1 KiB, as NCCL's tuner would; only
  // rank 0's answer counts (it reports the rows).
  Options o = small_options({"all_reduce", "all_gather"});
  std::vector<std::pair<std::string, std::uint64_t>> asked;
  std::mutex m;
  const JobResult r = run_job(2, o, [&](int rank) {
    Faults f;
    f.algorithm = [&, rank](std::string_view test, std::uint64_t bytes) {
      std::lock_guard lock(m);
      if (rank == 0) asked.emplace_back(std::string(test), bytes);
      RowAlgorithm a;
      a.algorithm = Name(bytes < 1024 ? "RING" : "TREE");
      a.protocol = Name(bytes < 1024 ? "LL" : "SIMPLE");
      a.path = Name("normal");
      a.source = Name("tuning_log");
      return std::optional<RowAlgorithm>(a);
    };
    return f;
  });
  ASSERT_FALSE(r.reporter.rows.empty());
  for (const auto& row : r.reporter.rows) {
    ASSERT_TRUE(row.algorithm.has_value()) << row.test << " " << row.bytes;
    EXPECT_EQ(row.algorithm->algorithm, row.bytes < 1024 ? "RING" : "TREE") << row.bytes;
    EXPECT_EQ(row.algorithm->protocol, row.bytes < 1024 ? "LL" : "SIMPLE");
  }
  // Asked once per measured size and placement, with the row's size.
  EXPECT_EQ(asked.size(), r.reporter.rows.size());
  for (std::size_t i = 0; i < asked.size(); ++i) {
    EXPECT_EQ(asked[i].first, r.reporter.rows[i].test);
    EXPECT_EQ(asked[i].second, r.reporter.rows[i].bytes);
  }
  // A backend that cannot tell leaves rows without it.
  const JobResult plain = run_job(2, small_options({"all_reduce"}));
  for (const auto& row : plain.reporter.rows) EXPECT_FALSE(row.algorithm.has_value());
}

// --label: a run measured by hand names its variant; every row carries the labels (the context
// does too: context_builder, checked end to end in the golden test's command lines).
TEST(Runner, EveryRowCarriesTheRequestsLabels) {
  Options o = small_options({"all_reduce", "bw"});
  o.request.labels = std::map<std::string, std::string>{{"variant", "by-hand"}, {"site", "lab"}};
  const JobResult r = run_job(2, o);
  ASSERT_FALSE(r.reporter.rows.empty());
  for (const auto& row : r.reporter.rows) {
    ASSERT_NE(row.labels.find("variant"), nullptr);
    EXPECT_EQ(*row.labels.find("variant"), "by-hand");
    EXPECT_EQ(*row.labels.find("site"), "lab");
  }
  EXPECT_TRUE(run_job(2, small_options({"all_reduce"})).reporter.rows.front().labels.empty());
}

TEST(Runner, CorruptedOutputIsCountedAndLocated) {
  Options o = small_options({"all_reduce"});
  o.min_bytes = o.max_bytes = 1024;
  const JobResult r = run_job(3, o, [](int rank) {
    Faults f;
    if (rank == 1) {
      f.corrupt = Primitive::kAllReduce;
      f.corrupt_index = 3;
    }
    return f;
  });
  EXPECT_EQ(r.totals.wrong, 2) << "one element on rank 1, out-of-place and in-place";
  ASSERT_EQ(r.reporter.rows.size(), 2u);
  for (const auto& row : r.reporter.rows) {
    EXPECT_EQ(row.status, RowStatus::kWrong);
    EXPECT_EQ(*row.wrong, 1);
  }
  ASSERT_FALSE(r.reporter.notes.empty());
  EXPECT_NE(r.reporter.notes.front().find("rank 1"), std::string::npos) << r.reporter.notes.front();
  EXPECT_NE(r.reporter.notes.front().find("element 3"), std::string::npos)
      << r.reporter.notes.front();
  EXPECT_NE(r.totals.first_mismatch.find("rank 1"), std::string::npos);
}

TEST(Runner, OutputTheLibraryNeverWroteIsWrong) {
  Options o = small_options({"all_gather"});
  o.min_bytes = o.max_bytes = 4096;
  o.dtypes = {DType::kInt32};
  const JobResult r = run_job(4, o, [](int rank) {
    Faults f;
    if (rank == 2) f.drop_output = Primitive::kAllGather;
    return f;
  });
  // Out-of-place: all 1024 gathered elements on rank 2 are still poison. In place, rank 2's own
  // block (256 elements) was its input and is already right.
  EXPECT_EQ(r.totals.wrong, 1024 + 768);
}

TEST(Runner, HeadlineIsTheSlowestRankAndNamesItsHost) {
  Options o = small_options({"all_reduce"});
  o.min_bytes = o.max_bytes = 1024;
  const JobResult r = run_job(4, o,
                              [](int rank) {
                                Faults f;
                                if (rank == 2) f.clock_scale = 1000.0;
                                return f;
                              },
                              {"node1", "node1", "node2", "node2"});
  ASSERT_EQ(r.reporter.rows.size(), 2u);
  for (const auto& row : r.reporter.rows) {
    EXPECT_EQ(row.slowest_rank, 2);
    EXPECT_EQ(row.slowest_host, "node2");
    EXPECT_DOUBLE_EQ(row.time_us->reported, row.time_us->slowest);
    EXPECT_GT(row.time_us->slowest, 10 * row.time_us->fastest);
    EXPECT_GT(row.time_us->mean, row.time_us->fastest);
    EXPECT_LT(row.time_us->mean, row.time_us->slowest);
    EXPECT_GE(row.time_us->per_iteration.max, row.time_us->per_iteration.min);
    // Bandwidths come from the reported time and nccl-tests' byte count and factor.
    EXPECT_NEAR(*row.algbw_gbps, 1024 / (row.time_us->reported * 1e-6) / 1e9, 1e-9);
    EXPECT_NEAR(*row.busbw_gbps, *row.algbw_gbps * 2 * 3 / 4.0, 1e-9);
    EXPECT_EQ(row.nodes, 2);
  }
}

TEST(Runner, AggregateOptionChoosesWhatIsReported) {
  Options o = small_options({"all_reduce"});
  o.min_bytes = o.max_bytes = 1024;
  auto slow_rank_1 = [](int rank) {
    Faults f;
    if (rank == 1) f.clock_scale = 100.0;
    return f;
  };
  o.aggregate = RankAggregate::kMean;
  const auto mean = run_job(2, o, slow_rank_1).reporter.rows.front();
  EXPECT_DOUBLE_EQ(mean.time_us->reported, mean.time_us->mean);
  o.aggregate = RankAggregate::kFastest;
  const auto fastest = run_job(2, o, slow_rank_1).reporter.rows.front();
  EXPECT_DOUBLE_EQ(fastest.time_us->reported, fastest.time_us->fastest);
  o.aggregate = RankAggregate::kRank0;
  const auto rank0 = run_job(2, o, slow_rank_1).reporter.rows.front();
  EXPECT_DOUBLE_EQ(rank0.time_us->reported, rank0.time_us->fastest);
}

TEST(Runner, BlockingModeTimesEachOperation) {
  Options o = small_options({"broadcast", "sendrecv"});
  o.blocking = true;
  o.iters = 5;
  const JobResult r = run_job(3, o);
  EXPECT_EQ(r.totals.wrong, 0);
  for (const auto& row : r.reporter.rows) {
    EXPECT_EQ(row.mode, MeasureMode::kBlocking);
    EXPECT_EQ(row.time_us->per_iteration.n, 5u);
  }
}

TEST(Runner, AggregatedMisalignedIterationsVerifyAndTimePerOperation) {
  Options o =
      small_options({"all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast"});
  o.agg_iters = 3;
  o.misalign = 5;
  o.dtypes = {DType::kInt32, DType::kHalf, DType::kDouble};
  o.per_iter_skip = 1;
  const JobResult r = run_job(3, o);
  EXPECT_EQ(r.totals.wrong, 0);
  ASSERT_EQ(r.reporter.rows.size(), expected_rows(o, 3));
  for (const auto& row : r.reporter.rows) {
    EXPECT_EQ(row.ops_per_iteration, 3);
    EXPECT_EQ(row.misalign, 5);
    EXPECT_EQ(row.time_us->per_iteration.n, 2u) << "-K 1 of -n 3";
    EXPECT_EQ(row.time_us->skipped_iterations, 1);
    EXPECT_GT(row.cpu_time_us.value_or(0), 0);
    EXPECT_GT(row.timestamp.value_or(0), 1.6e9);
  }
}

TEST(Runner, BlockingModesTimeOperationsOrIterations) {
  Options o = small_options({"all_reduce"});
  o.agg_iters = 2;
  for (const auto& [mode, samples] : {std::pair{1, 6u}, {2, 6u}, {3, 3u}}) {
    o.blocking = mode;
    const JobResult r = run_job(2, o);
    EXPECT_EQ(r.totals.wrong, 0);
    for (const auto& row : r.reporter.rows) {
      EXPECT_EQ(row.mode, MeasureMode::kBlocking);
      EXPECT_EQ(row.time_us->per_iteration.n, samples) << "-z " << mode;
    }
  }
}

TEST(Runner, CyclesRepeatTheSweepAndEachRowSaysWhichCycle) {
  Options o = small_options({"all_reduce", "sendrecv"});
  o.run_cycles = 3;
  const JobResult r = run_job(2, o);
  EXPECT_EQ(r.totals.cycles, 3);
  EXPECT_FALSE(r.totals.interrupted);
  std::set<int> cycles;
  for (const auto& row : r.reporter.rows) cycles.insert(row.cycle.value_or(-1));
  EXPECT_EQ(cycles, (std::set<int>{0, 1, 2}));
  EXPECT_EQ(r.reporter.rows.size(),
            3 * expected_rows(small_options({"all_reduce", "sendrecv"}), 2));
}

TEST(Runner, PrecisionRecordsTheIntervalTheIterationsAndWhetherItConverged) {
  Options o = small_options({"all_reduce", "sendrecv"});
  o.precision = 0.5;  // thread ranks are noisy; 50% is reached in a few batches
  // The budget is no verdict: on an idle machine 50% takes about a second, and a loaded one (the
  // rest of the suite beside these threads) needs more batches, which the budget must allow.
  o.max_time_s = 60;
  const JobResult r = run_job(2, o);
  ASSERT_EQ(r.reporter.rows.size(), expected_rows(o, 2));
  for (const auto& row : r.reporter.rows) {
    ASSERT_TRUE(row.precision) << row.test << " " << row.bytes;
    const RowPrecision& p = *row.precision;
    EXPECT_DOUBLE_EQ(p.target, 0.5);
    EXPECT_TRUE(p.converged) << row.test << " " << row.bytes;
    ASSERT_TRUE(p.half_width);
    EXPECT_LE(*p.half_width, 0.5);
    EXPECT_NEAR(*p.low_us, row.time() * (1 - *p.half_width), 1e-9 * row.time());
    EXPECT_NEAR(*p.high_us, row.time() * (1 + *p.half_width), 1e-9 * row.time());
    // At least two batches of at least one iteration for each of the interval's batch means.
    EXPECT_GE(row.iterations, static_cast<int>(2 * kMeanIntervalBatches));
  }

  // A target out of reach stops at the budget and says so.
  o.precision = 1e-4;
  o.max_time_s = 0.05;
  o.tests = {"all_reduce"};
  const JobResult tight = run_job(2, o);
  ASSERT_FALSE(tight.reporter.rows.empty());
  for (const auto& row : tight.reporter.rows) {
    ASSERT_TRUE(row.precision);
    EXPECT_FALSE(row.precision->converged);
    EXPECT_GE(row.precision->seconds, 0.05);
  }
  // Without --precision, rows carry no interval.
  EXPECT_FALSE(run_job(2, small_options({"all_reduce"})).reporter.rows.front().precision);
}

TEST(Runner, AStopRequestEndsEveryRankAfterTheSizeInProgress) {
  // Endless cycles; the request reaches one rank only, as a signal may: all stop together.
  Options o = small_options({"all_reduce"});
  o.run_cycles = 0;
  ThreadWorld world(3);
  std::atomic<bool> request{false};
  std::atomic<bool> never{false};
  CollectingReporter collected;
  std::vector<RunTotals> totals(3);
  world.run([&](int rank) {
    auto bootstrap = world.make_bootstrap(rank);
    auto backend = world.make_backend(rank);
    CollectingReporter ignored;
    Reporter& reporter = rank == 0 ? static_cast<Reporter&>(collected) : ignored;
    Runner runner(o, *bootstrap, *backend, reporter, nullptr, "0123456789abcdef");
    runner.stop_on(rank == 1 ? request : never);
    if (rank == 1) {
      // Ask once a few sizes have been measured.
      std::thread([&request] {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        request = true;
      }).detach();
    }
    totals[static_cast<std::size_t>(rank)] = runner.run(specs_of(o));
  });
  for (const auto& t : totals) {
    EXPECT_TRUE(t.interrupted);
    EXPECT_EQ(t.cycles, totals.front().cycles);
  }
  EXPECT_FALSE(collected.rows.empty());
}

TEST(Runner, AllPairsReportsEachPair) {
  Options o = small_options({"latency", "bw", "bibw"});
  o.pairs = PairMode::kAll;
  o.window = 4;
  const JobResult r = run_job(5, o);  // rank 4 sits out
  EXPECT_EQ(r.totals.wrong, 0);
  ASSERT_EQ(r.reporter.rows.size(), expected_rows(o, 5));
  std::set<std::pair<int, int>> pairs;
  for (const auto& row : r.reporter.rows) {
    ASSERT_TRUE(row.pair);
    pairs.insert({row.pair->first, row.pair->second});
    EXPECT_TRUE(row.slowest_rank == row.pair->first || row.slowest_rank == row.pair->second);
    EXPECT_EQ(row.window.value_or(0), row.test == "latency" ? 0 : 4);
  }
  EXPECT_EQ(pairs, (std::set<std::pair<int, int>>{{0, 2}, {1, 3}}));
}

TEST(Runner, DefaultPairIsZeroAndOne) {
  const JobResult r = run_job(4, small_options({"bw"}));
  for (const auto& row : r.reporter.rows) EXPECT_EQ(row.pair, (Pair{0, 1}));
}

/// Forwards to a real backend and records every operation's input and output addresses.
class AddressRecordingBackend : public Backend {
 public:
  explicit AddressRecordingBackend(std::unique_ptr<Backend> inner) : inner_(std::move(inner)) {}
  const BackendInfo& info() const override { return inner_->info(); }
  Device& device() override { return inner_->device(); }
  std::optional<std::string> unsupported(Primitive p, DType t, ReduceOp op) const override {
    return inner_->unsupported(p, t, op);
  }
  void submit(const CollArgs& args) override {
    addresses[{args.count, args.placement}].insert({args.send, args.recv});
    inner_->submit(args);
  }
  void group_begin() override { inner_->group_begin(); }
  void group_end() override { inner_->group_end(); }
  void synchronize() override { inner_->synchronize(); }

  /// Distinct (send, recv) pairs per (element count, placement).
  std::map<std::pair<std::size_t, Placement>, std::set<std::pair<const void*, void*>>> addresses;

 private:
  std::unique_ptr<Backend> inner_;
};

TEST(Runner, FixedBuffersReuseOneSliceAndRotatingBuffersMove) {
  for (const BufferPolicy policy : {BufferPolicy::kFixed, BufferPolicy::kRotate}) {
    Options o = small_options({"all_reduce"});
    o.iters = 8;
    o.agg_iters = 2;  // several operations per iteration take positions too
    o.buffers = policy;
    ThreadWorld world(2);
    CollectingReporter reporter;
    std::map<std::pair<std::size_t, Placement>, std::set<std::pair<const void*, void*>>> seen;
    std::mutex mutex;
    world.run([&](int rank) {
      auto bootstrap = world.make_bootstrap(rank);
      AddressRecordingBackend backend(world.make_backend(rank));
      CollectingReporter ignored;
      Reporter& out = rank == 0 ? static_cast<Reporter&>(reporter) : ignored;
      Runner runner(o, *bootstrap, backend, out, nullptr, "0123456789abcdef");
      const RunTotals totals = runner.run(specs_of(o));
      EXPECT_EQ(totals.wrong, 0);
      if (rank == 0) {
        const std::lock_guard lock(mutex);
        seen = backend.addresses;
      }
    });
    ASSERT_EQ(reporter.rows.size(), expected_rows(o, 2));
    for (const auto& row : reporter.rows) EXPECT_EQ(row.buffers, policy) << row.bytes;
    ASSERT_FALSE(seen.empty());
    for (const auto& [key, pairs] : seen) {
      const std::size_t count = key.first;
      if (policy == BufferPolicy::kFixed) {
        // Warm-up, timing and verification: every operation of the size on the same memory.
        EXPECT_EQ(pairs.size(), 1u) << count << " elements, " << name(key.second);
      } else if (count * sizeof(float) < o.max_bytes) {
        // The buffers hold the largest size: a smaller one has room to move, and does.
        EXPECT_GT(pairs.size(), 1u) << count << " elements, " << name(key.second);
      }
    }
  }
}

TEST(Runner, SizesBelowOneElementPerRankAreSkippedWithANote) {
  Options o = small_options({"all_gather"});
  o.min_bytes = 8;
  o.max_bytes = 64;
  const JobResult r = run_job(4, o);
  ASSERT_EQ(r.reporter.notes.size(), 1u);
  EXPECT_NE(r.reporter.notes[0].find("8 B"), std::string::npos) << r.reporter.notes[0];
  EXPECT_EQ(r.reporter.rows.front().bytes, 64u);
}

TEST(Runner, UnsupportedCombinationsAreReportedNotSkippedSilently) {
  Options o = small_options({"all_reduce"});
  o.dtypes = {DType::kFloat, DType::kHalf};
  o.all_dtypes = true;
  const JobResult r = run_job(2, o, [](int) {
    Faults f;
    f.refuse_dtype = DType::kHalf;
    return f;
  });
  int unsupported = 0;
  for (const auto& row : r.reporter.rows) {
    if (row.status == RowStatus::kUnsupported) {
      ++unsupported;
      EXPECT_EQ(row.dtype, DType::kHalf);
      EXPECT_EQ(row.note, "refused by the test");
    }
  }
  EXPECT_EQ(unsupported, 1);
  EXPECT_EQ(r.totals.unsupported, 1);
}

TEST(Preflight, ExplicitlyRequestedUnsupportedDtypeIsAUsageError) {
  Options o = small_options({"all_reduce"});
  o.dtypes = {DType::kHalf};
  try {
    run_job(2, o, [](int) {
      Faults f;
      f.refuse_dtype = DType::kHalf;
      return f;
    });
    FAIL() << "expected a usage error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage);
    EXPECT_NE(std::string(e.what()).find("-d half"), std::string::npos) << e.what();
  }
}

TEST(Preflight, NamedTestTheBackendCannotRunIsAUsageErrorNamingTheTest) {
  Options o = small_options({"all_gather"});
  try {
    run_job(2, o, [](int) {
      Faults f;
      f.refuse_primitive = Primitive::kAllGather;
      return f;
    });
    FAIL() << "expected a usage error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage);
    EXPECT_EQ(std::string(e.what()), "all_gather: no such operation in the test backend");
  }
}

TEST(Preflight, AllTestsReportsWhatTheBackendCannotRunAndMeasuresTheRest) {
  Options o = small_options({"all_gather", "broadcast"});
  o.all_tests = true;
  o.dtypes = {DType::kFloat, DType::kHalf};
  const JobResult r = run_job(2, o, [](int) {
    Faults f;
    f.refuse_primitive = Primitive::kAllGather;
    return f;
  });
  std::map<std::string, std::set<RowStatus>> statuses;
  for (const auto& row : r.reporter.rows) statuses[row.test.str()].insert(row.status);
  EXPECT_EQ(statuses["all_gather"], std::set<RowStatus>{RowStatus::kUnsupported});
  EXPECT_EQ(statuses["broadcast"], std::set<RowStatus>{RowStatus::kOk});
  EXPECT_EQ(r.totals.unsupported, 2);  // one row per dtype
  EXPECT_EQ(r.totals.wrong, 0);
}

TEST(Preflight, BuffersThatDoNotFitAreRefusedBeforeAllocating) {
  Options o = small_options({"all_reduce"});
  o.max_bytes = 1 << 20;  // needs 2 MiB per rank
  try {
    run_job(2, o,
            [](int rank) {
              Faults f;
              f.available_bytes = rank == 1 ? (1u << 20) : (1u << 30);
              return f;
            },
            {"big", "small"});
    FAIL() << "expected a usage error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kUsage);
    const std::string m = e.what();  // rank 0's message (the job rethrows rank order)
    EXPECT_NE(m.find("-e 1 MiB"), std::string::npos) << m;
    EXPECT_NE(m.find("small"), std::string::npos) << m;
    EXPECT_NE(m.find("-e 512 KiB fits"), std::string::npos) << m;
  }
}

}  // namespace
}  // namespace collbench
