#include "collbench/agreement.h"

#include <fmt/format.h>

#include <tuple>

#include "collbench/error.h"
#include "collbench/record.h"

namespace collbench {
namespace {

/// Every parsed option, named as the command line spells it so that a difference names the
/// option to fix. The command line's text itself is left out: "-e 1M" and "-e 1048576" agree.
struct OptionsDigest {
  std::vector<std::string> tests;
  bool all_tests = false;
  std::uint64_t min_bytes = 0, max_bytes = 0, step_factor = 0, step_bytes = 0;
  int iters = 0, warmup = 0, check = 0;
  std::vector<DType> dtypes;
  bool all_dtypes = false;
  std::vector<ReduceOp> ops;
  int root = 0, blocking = 0;
  RankAggregate aggregate = RankAggregate::kSlowest;
  int graph_launches = 0, agg_iters = 0, run_cycles = 0, misalign = 0, per_iter_skip = 0;
  int threads_per_process = 0, gpus_per_thread = 0;
  bool report_cputime = false, report_timestamps = false, memory_report = false;
  std::optional<double> min_busbw, nccl_tests_min_bw;
  std::string nccl_tests_json, backend;
  std::vector<GivenOption> backend_options;
  std::string jsonl;
  double timeout_s = 0;
  PairMode pairs = PairMode::kFirst;
  std::optional<BufferPolicy> buffers;
  int window = 0;
  std::uint32_t seed = 0;
  bool quiet = false;
  std::optional<double> precision;
  double max_time_s = 0;
  std::string split;

  static constexpr auto fields() {
    using D = OptionsDigest;
    return std::tuple{Field{"the test list", &D::tests},
                      Field{"all (tests)", &D::all_tests},
                      Field{"-b", &D::min_bytes},
                      Field{"-e", &D::max_bytes},
                      Field{"-f", &D::step_factor},
                      Field{"-i", &D::step_bytes},
                      Field{"-n", &D::iters},
                      Field{"-w", &D::warmup},
                      Field{"-c", &D::check},
                      Field{"-d", &D::dtypes},
                      Field{"-d all", &D::all_dtypes},
                      Field{"-o", &D::ops},
                      Field{"-r", &D::root},
                      Field{"-z", &D::blocking},
                      Field{"-a", &D::aggregate},
                      Field{"-G", &D::graph_launches},
                      Field{"-m", &D::agg_iters},
                      Field{"-N", &D::run_cycles},
                      Field{"-u", &D::misalign},
                      Field{"-K", &D::per_iter_skip},
                      Field{"-t", &D::threads_per_process},
                      Field{"-g", &D::gpus_per_thread},
                      Field{"-C", &D::report_cputime},
                      Field{"-S", &D::report_timestamps},
                      Field{"-M", &D::memory_report},
                      Field{"--min-busbw", &D::min_busbw},
                      Field{"NCCL_TESTS_MIN_BW", &D::nccl_tests_min_bw},
                      Field{"-J", &D::nccl_tests_json},
                      Field{"--backend", &D::backend},
                      Field{"the backend options", &D::backend_options},
                      Field{"--jsonl", &D::jsonl},
                      Field{"--timeout", &D::timeout_s},
                      Field{"--pairs", &D::pairs},
                      Field{"--buffers", &D::buffers},
                      Field{"--window", &D::window},
                      Field{"--seed", &D::seed},
                      Field{"-q", &D::quiet},
                      Field{"--precision", &D::precision},
                      Field{"--max-time", &D::max_time_s},
                      Field{"--split", &D::split}};
  }
};

OptionsDigest digest(const Options& o) {
  return OptionsDigest{o.tests,
                       o.all_tests,
                       o.min_bytes,
                       o.max_bytes,
                       o.step_factor,
                       o.step_bytes,
                       o.iters,
                       o.warmup,
                       o.check,
                       o.dtypes,
                       o.all_dtypes,
                       o.ops,
                       o.root,
                       o.blocking,
                       o.aggregate,
                       o.graph_launches,
                       o.agg_iters,
                       o.run_cycles,
                       o.misalign,
                       o.per_iter_skip,
                       o.threads_per_process,
                       o.gpus_per_thread,
                       o.report_cputime,
                       o.report_timestamps,
                       o.memory_report,
                       o.min_busbw,
                       o.nccl_tests_min_bw,
                       o.nccl_tests_json,
                       o.backend,
                       o.backend_options,
                       o.jsonl,
                       o.timeout_s,
                       o.pairs,
                       o.buffers,
                       o.window,
                       o.seed,
                       o.quiet,
                       o.precision,
                       o.max_time_s,
                       o.split_text};
}

/// What one rank made of its command line.
struct StartupRecord {
  std::string usage_error;  ///< the refusal; empty when the command line was accepted
  bool exit_text = false;   ///< --help or --version
  OptionsDigest options;

  static constexpr auto fields() {
    return std::tuple{Field{"usage_error", &StartupRecord::usage_error},
                      Field{"exit_text", &StartupRecord::exit_text},
                      Field{"options", &StartupRecord::options}};
  }
};

/// The first option whose value differs, with both values as JSON text; nullopt when none.
struct Difference {
  std::string option, theirs, ours;
};
std::optional<Difference> first_difference(const OptionsDigest& theirs, const OptionsDigest& ours) {
  std::optional<Difference> found;
  for_each_field<OptionsDigest>([&](const auto& field) {
    if (found) return;
    const nlohmann::json a = json_value(theirs.*(field.member));
    const nlohmann::json b = json_value(ours.*(field.member));
    if (a != b) found = Difference{std::string(field.name), a.dump(), b.dump()};
  });
  return found;
}

}  // namespace

void agree_on_command_line(Bootstrap& bootstrap, const ParseResult& parsed,
                           const std::string& usage_error) {
  StartupRecord mine;
  mine.usage_error = usage_error;
  mine.exit_text = usage_error.empty() && !parsed.exit_text.empty();
  if (usage_error.empty() && !mine.exit_text) mine.options = digest(parsed.options);
  const auto all = allgather(bootstrap, mine, "the command line of every rank");

  // Every rank decides from the same gathered records, so every rank ends with the same line.
  const StartupRecord& first = all.front();
  if (!first.usage_error.empty()) throw Error(ExitCode::kUsage, first.usage_error);
  for (std::size_t r = 1; r < all.size(); ++r) {
    const StartupRecord& other = all[r];
    if (!other.usage_error.empty()) {
      throw_usage(
          "rank {} refused its command line, which differs from rank 0's: {}; give every rank "
          "the same options",
          r, other.usage_error);
    }
    if (other.exit_text != first.exit_text) {
      throw_usage(
          "rank {} was {}given --help or --version and rank 0 was {}; give every rank the same "
          "options",
          r, other.exit_text ? "" : "not ", first.exit_text ? "" : "not");
    }
    if (const auto d = first_difference(other.options, first.options)) {
      throw_usage(
          "rank {} was given other options than rank 0: {} is {} there and {} on rank 0; give "
          "every rank the same options",
          r, d->option, d->theirs, d->ours);
    }
  }
}

}  // namespace collbench
