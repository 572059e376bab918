#include "collbench/cli.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <optional>

#include "collbench/cli_values.h"
#include "collbench/error.h"
#include "collbench/files.h"
#include "collbench/request_cli.h"
#include "collbench/sizes.h"
#include "collbench/system.h"
#include "collbench/text.h"

namespace collbench {
namespace {

/// -t × -g: ranks (GPUs) one process may drive; more GPUs than any machine has.
constexpr int kMaxRanksPerProcess = 64;

constexpr const char* kExamples = R"(
Sizes take K/M/G suffixes (powers of 1024, as nccl-tests); bandwidths are GB/s with GB = 1e9 bytes.
The reported time is the slowest rank's (-a 3); nccl-tests reports the mean over ranks (-a 1).

Examples:
  mpirun -np 4 collbench all_reduce -b 8 -e 256M -f 2
  mpirun -np 8 collbench all_reduce,all_gather -b 8 -e 1G -f 2 -d all --jsonl out.jsonl
  srun --mpi=pmix collbench all -b 1M -e 64M -f 4 -c 1 --timeout 60
  mpirun -np 16 collbench bw,latency --pairs all -b 8 -e 16M -f 4
  mpirun -np 8 collbench all_reduce -b 8 -e 8G -f 2 --require-net Libfabric
  mpirun -np 2 --map-by node collbench latency,bw -b 8 -e 1G -f 2 --backend ofi --require-net efa

Is every node set up right? One task per node:
  srun --mpi=pmix --ntasks-per-node=1 collbench doctor      (collbench doctor --help)

Exit codes: 0 success, 1 wrong results, 2 bad usage, 3 runtime failure (timeout, lost rank,
library error, network not as required).)";

/// Comma-separated lists, possibly given as several arguments ("all_reduce,bw" "latency"). An
/// empty item ("float,,int8", "all_reduce,") is refused, naming `flag`: a stray comma is a typo,
/// not a request for fewer items.
std::vector<std::string> split_commas(std::string_view flag,
                                      const std::vector<std::string>& items) {
  std::vector<std::string> out;
  for (const auto& item : items) {
    if (items.size() > 1 && trim(item).empty()) {
      throw_usage("{} '{}': an empty argument among {}; remove it", flag, item,
                  fmt::join(items, " "));
    }
    if (const auto empty = first_empty_item(item, ',')) {
      throw_usage("{} '{}': item {} is empty; remove the extra comma", flag, item, *empty);
    }
    for (auto& part : split_nonempty(item, ',')) out.push_back(std::move(part));
  }
  return out;
}

/// Parses a whole decimal integer within [lo, hi]; otherwise one clear usage line.
long long parse_integer(const std::string& flag, const std::string& text, long long lo,
                        long long hi, std::string_view accepted) {
  long long value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || value < lo || value > hi) {
    throw_usage("{} {}: expected {}", flag, text, accepted);
  }
  return value;
}

std::uint64_t parse_size_flag(const std::string& flag, const std::string& text) {
  const auto size = parse_size(text);
  if (!size) {
    throw_usage(
        "{} {}: not a size; give whole bytes up to 1048576T (2^60) with an optional K/M/G/T "
        "suffix (powers of 1024), e.g. -b 8 -e 256M",
        flag, text);
  }
  return *size;
}

/// A list that names nothing (`''`, `,`) would measure nothing and exit 0: refuse it.
void require_items(std::string_view flag, const std::string& given, std::size_t items,
                   std::string_view accepted) {
  if (items == 0) {
    throw_usage("{} '{}': names nothing; give one or more of {}, comma-separated", flag, given,
                accepted);
  }
}

/// A list that names an item twice (`all` names every item) would measure it twice: refuse it,
/// naming the item.
template <typename T, typename Name>
void refuse_duplicates(std::string_view flag, const std::string& given, const std::vector<T>& items,
                       Name name_of) {
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (std::find(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(i), items[i]) !=
        items.begin() + static_cast<std::ptrdiff_t>(i)) {
      throw_usage("{} '{}': {} is named twice (all names every one); name each once", flag, given,
                  name_of(items[i]));
    }
  }
}

std::string test_names(const std::vector<const CollectiveSpec*>& specs) {
  std::vector<std::string_view> names;
  for (const auto* spec : specs) names.push_back(spec->name);
  return fmt::format("{}", fmt::join(names, ", "));
}

/// A flag whose value is a whole number in a range, stored into Options as given.
struct IntegerFlag {
  IntegerFlag(std::string_view flags_in, std::string help_in, long long min_in, long long max_in,
              std::string_view accepted_in, std::function<void(long long)> store_in)
      : flags(flags_in),
        help(std::move(help_in)),
        min(min_in),
        max(max_in),
        accepted(accepted_in),
        store(std::move(store_in)) {}

  std::string_view flags;  ///< "-n,--iters"
  std::string help;
  long long min = 0, max = 0;
  std::string_view accepted;  ///< what the usage error says is accepted
  std::function<void(long long)> store;
  std::string text;  ///< as given; empty when absent
  std::string spelling() const { return std::string(flags.substr(0, flags.find(','))); }
};

/// nccl-tests' numeric flags (and collbench's), with nccl-tests' meaning.
std::vector<IntegerFlag> integer_flags(Options& o) {
  constexpr long long kMany = 100000000;
  auto into = [](auto& member) {
    return [&member](long long v) {
      member = static_cast<std::remove_reference_t<decltype(member)>>(v);
    };
  };
  auto into_bool = [](bool& member) { return [&member](long long v) { member = v != 0; }; };
  return {
      {"-n,--iters", "Timed iterations per size (default 20)", 1, kMany,
       "1 to 100000000 iterations", into(o.iters)},
      {"-w,--warmup,--warmup_iters", "Warm-up iterations per size (default 5)", 0, kMany,
       "0 to 100000000 warm-up iterations", into(o.warmup)},
      {"-c,--check", "Verify results: rounds per size, 0 = off (default 1)", 0, 1000,
       "0 (off) or 1 to 1000 verification rounds", into(o.check)},
      {"-r,--root", "Root rank of broadcast, reduce, scatter and gather (default 0)", 0,
       std::numeric_limits<int>::max(), "a rank number (0 to 2147483647)", into(o.root)},
      {"-m,--agg_iters", "Operations aggregated in one group per iteration (default 1)", 1, 1 << 20,
       "1 to 1048576 operations", into(o.agg_iters)},
      {"-N,--run_cycles",
       "Run the whole sweep this many times, printing every cycle; 0 = until interrupted "
       "(Ctrl-C ends cleanly after the size in progress) (default 1)",
       0, kMany, "0 (until interrupted) or 1 to 100000000 cycles", into(o.run_cycles)},
      {"-z,--blocking",
       "0 batch; 1 complete each operation, barrier between; 2 complete each, no barrier; 3 "
       "complete and barrier after each iteration of -m operations (default 0)",
       0, 3, "0, 1, 2 or 3", into(o.blocking)},
      {"-a,--average",
       "Rank aggregate shown: 0 rank 0, 1 mean (nccl-tests' default), 2 fastest, 3 slowest "
       "(default 3)",
       0, 3, "0 (rank 0), 1 (mean), 2 (fastest) or 3 (slowest)",
       [&o](long long v) { o.aggregate = static_cast<RankAggregate>(v); }},
      {"-G,--cudagraph", "Capture the iterations in a CUDA graph, replay N times", 0, 1000000,
       "0 (off) or 1 to 1000000 graph launches", into(o.graph_launches)},
      {"-u,--unalign", "Misalign the buffers by this many elements (default 0)", 0, 1 << 20,
       "0 to 1048576 elements", into(o.misalign)},
      {"-C,--report_cputime",
       "1: show the host time to issue each operation (cputime) in the time columns", 0, 1,
       "0 or 1", into_bool(o.report_cputime)},
      {"-S,--report_timestamps", "1: end each table line with the time it was measured", 0, 1,
       "0 or 1", into_bool(o.report_timestamps)},
      {"-M,--memory", "1: report the memory the buffers and the library use", 0, 1, "0 or 1",
       into_bool(o.memory_report)},
      {"-I,--per_iter_timing",
       "Accepted for nccl-tests scripts: collbench always times every iteration (p50/p99 columns, "
       "per_iteration in the results)",
       0, 1, "0 or 1", [](long long) {}},
      {"-K,--per_iter_skip", "Leave the first N iterations out of the per-iteration statistics", 0,
       kMany, "0 to 100000000 iterations", into(o.per_iter_skip)},
      {"-t,--nthreads",
       "Threads per process, as nccl-tests: ranks = processes x threads x GPUs (NCCL; default 1)",
       1, kMaxRanksPerProcess, "1 to 64 threads", into(o.threads_per_process)},
      {"-g,--ngpus",
       "GPUs per thread, as nccl-tests: each of a process's threads x GPUs ranks drives one GPU "
       "from a thread of its own (NCCL; default 1)",
       1, kMaxRanksPerProcess, "1 to 64 GPUs", into(o.gpus_per_thread)},
      {"-p,--parallel_init",
       "nccl-tests' parallel initialisation of -t threads: collbench's ranks always start their "
       "communicators in parallel (default 0)",
       0, 1, "0 or 1", [](long long) {}},
      {"--window", "Messages in flight per bw/bibw iteration (default 64)", 1, 1 << 16,
       "1 to 65536 messages", into(o.window)},
  };
}

/// Seconds, 0 or more.
double parse_seconds(const std::string& flag, const std::string& text) {
  double value = -1;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || !(value >= 0) ||
      !std::isfinite(value)) {
    throw_usage("{} {}: expected seconds (0 or more; 0 disables the watchdog)", flag, text);
  }
  return value;
}

/// A bandwidth in GB/s, greater than 0.
double parse_bandwidth(const std::string& flag, const std::string& text) {
  double value = -1;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || !(value > 0) ||
      !std::isfinite(value)) {
    throw_usage("{} {}: expected a bus bandwidth in GB/s (a number above 0)", flag, text);
  }
  return value;
}

/// --precision: "1%" (a percentage) or "0.01" (a fraction), from 0.01% to 50%.
double parse_precision(const std::string& text) {
  const bool percent = !text.empty() && text.back() == '%';
  const std::string number = percent ? text.substr(0, text.size() - 1) : text;
  double value = -1;
  const auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (ec == std::errc() && ptr == number.data() + number.size() && std::isfinite(value)) {
    if (percent) value /= 100;
    if (value >= 1e-4 && value <= 0.5) return value;
  }
  throw_usage(
      "--precision {}: expected the half-width of the 95% confidence interval as a percentage "
      "from 0.01% to 50% (e.g. 1%) or a fraction from 0.0001 to 0.5",
      text);
}

/// --precision and --max-time: the adaptive batches of the batch mode, within a time budget.
void check_precision(const Options& o, bool max_time_given) {
  if (max_time_given && !o.precision) {
    throw_usage("--max-time {:g}: it bounds the time --precision takes per size; add --precision",
                o.max_time_s);
  }
  if (!o.precision) return;
  if (o.graph_launches > 0 || o.blocking > 0) {
    throw_usage(
        "--precision {:g}% with {}: it repeats timed batches, which -G and -z do not time; drop "
        "one",
        *o.precision * 100, o.graph_launches > 0 ? "-G" : "-z");
  }
}

/// Flags that cannot go together.
/// --split as it will run: the mode, sample's round count, nccl-tests' rule from the environment.
std::string describe_split(const SplitSpec& spec) {
  switch (spec.mode) {
    case SplitMode::kSample:
      return fmt::format("sample:{}", spec.sample_rounds);
    case SplitMode::kNcclTests:
      return fmt::format("nccl-tests {}", describe(spec.nccl_tests));
    default:
      return std::string(name(spec.mode));
  }
}

void check_combinations(const Options& o) {
  if (o.split && o.ranks_per_process() > 1) {
    throw_usage(
        "--split with -t {} -g {}: groups are formed from processes; launch one process per GPU "
        "(-t 1 -g 1) to measure groups",
        o.threads_per_process, o.gpus_per_thread);
  }
  if (o.ranks_per_process() > kMaxRanksPerProcess) {
    throw_usage("-t {} -g {}: {} ranks per process; collbench runs at most {} (one per GPU)",
                o.threads_per_process, o.gpus_per_thread, o.ranks_per_process(),
                kMaxRanksPerProcess);
  }
  if (o.split && !o.nccl_tests_json.empty()) {
    throw_usage(
        "--split with -J: nccl-tests' JSON has no place for groups; use --jsonl, whose rows name "
        "their group");
  }
  if (o.split && o.run_cycles == 0) {
    throw_usage("--split with -N 0: a round would never end; give -N a number of cycles");
  }
  if (o.graph_launches > 0 && o.blocking > 0) {
    throw_usage(
        "-G {} with -z {}: graph mode replays a batch, blocking modes time single operations; "
        "choose one",
        o.graph_launches, o.blocking);
  }
  if (o.per_iter_skip >= o.iters) {
    throw_usage("-K {}: it leaves none of the -n {} iterations for the statistics; use -K below -n",
                o.per_iter_skip, o.iters);
  }
}

const BackendDescriptor* find_backend(std::span<const BackendDescriptor* const> backends,
                                      std::string_view name) {
  for (const auto* b : backends) {
    if (b->name == name) return b;
  }
  return nullptr;
}

std::string backend_names(std::span<const BackendDescriptor* const> backends,
                          std::string_view separator) {
  std::vector<std::string_view> names;
  for (const auto* b : backends) names.push_back(b->name);
  return fmt::format("{}", fmt::join(names, separator));
}

/// The backends that declare an option `key`, as "nccl or ofi".
std::string takers(std::span<const BackendDescriptor* const> backends, std::string_view key) {
  std::vector<std::string_view> names;
  for (const auto* b : backends) {
    if (b->option(key)) names.push_back(b->name);
  }
  return fmt::format("{}", fmt::join(names, " or "));
}

/// One command-line flag that one or more backends declare.
struct DeclaredFlag {
  const BackendOption* option = nullptr;  ///< the first declaration (flags and key agree)
  std::string help;
  std::string value;  ///< as given; empty when absent
  std::string spelling(const CLI::App& app) const {
    // The spelling the user typed, for messages ("-R" or "--register").
    const CLI::Option* cli = app.get_option(std::string(option->spelling()));
    for (const auto& name : cli->get_snames()) {
      if (!name.empty()) return "-" + name;
    }
    return std::string(option->spelling());
  }
};

/// Every backend option once, with help that says what it means to each backend declaring it.
std::vector<DeclaredFlag> declared_flags(std::span<const BackendDescriptor* const> backends) {
  std::vector<DeclaredFlag> flags;
  for (const auto* backend : backends) {
    for (const auto& option : backend->options) {
      auto same = std::find_if(flags.begin(), flags.end(),
                               [&](const DeclaredFlag& f) { return f.option->key == option.key; });
      if (same == flags.end()) {
        flags.push_back(
            {&option, fmt::format("[--backend {}] ", takers(backends, option.key)), ""});
        same = std::prev(flags.end());
      } else {
        same->help += "; ";
      }
      same->help += fmt::format("{}: {}", backend->name, option.help);
    }
  }
  return flags;
}

/// Parses a given value against one backend's declaration; throws Error(kUsage).
OptionValue parse_value(const GivenOption& given, const BackendOption& option,
                        std::string_view backend) {
  if (option.kind == BackendOption::Kind::kText) {
    if (!option.choices.empty() && std::find(option.choices.begin(), option.choices.end(),
                                             given.text) == option.choices.end()) {
      throw_usage("{} {}: expected {} for the {} backend", given.spelling, given.text,
                  fmt::join(option.choices, " or "), backend);
    }
    return given.text;
  }
  return static_cast<std::int64_t>(
      parse_integer(given.spelling, given.text, option.min, option.max,
                    fmt::format("{} to {} for the {} backend", option.min, option.max, backend)));
}

void check_for_some_backend(const GivenOption& given,
                            std::span<const BackendDescriptor* const> backends) {
  std::optional<Error> last;
  for (const auto* backend : backends) {
    const BackendOption* option = backend->option(given.key);
    if (!option) continue;
    try {
      parse_value(given, *option, backend->name);
      return;
    } catch (const Error& e) {
      last = e;
    }
  }
  if (last) throw *last;
}

}  // namespace

BackendArgs backend_args(const Options& options, const BackendDescriptor& backend,
                         std::span<const BackendDescriptor* const> backends) {
  if (options.graph_launches > 0 && !backend.graphs) {
    std::vector<std::string_view> able;
    for (const auto* b : backends) {
      if (b->graphs) able.push_back(b->name);
    }
    throw_usage(
        "-G {}: CUDA-graph mode needs a backend on a GPU stream (--backend {}); the {} "
        "backend has none",
        options.graph_launches, fmt::join(able, " or "), backend.name);
  }
  std::map<std::string, OptionValue> values;
  for (const auto& option : backend.options) values[std::string(option.key)] = option.default_value;
  for (const auto& given : options.backend_options) {
    const BackendOption* option = backend.option(given.key);
    if (!option) {
      throw_usage("{} {}: the {} backend does not take this option; use --backend {}",
                  given.spelling, given.text, backend.name, takers(backends, given.key));
    }
    values[given.key] = parse_value(given, *option, backend.name);
  }
  return BackendArgs(std::move(values));
}

Options with_backend_defaults(Options given, const BackendDescriptor& backend) {
  if (!given.buffers) given.buffers = backend.buffers;
  return given;
}

MeasureMode measurement_mode(const Options& options) {
  if (options.graph_launches > 0) return MeasureMode::kGraph;
  return options.blocking ? MeasureMode::kBlocking : MeasureMode::kBatch;
}

namespace {

// The options' texts as given, before they are read.
struct GivenText {
  std::vector<std::string> tests;
  std::string min_bytes, max_bytes, factor, step, dtypes, ops, timeout, pairs, min_busbw;
  std::string precision, max_time;
  std::string buffers, split;
  RequestTexts request;  ///< the request's fields collbench has no option of its own for
};

// Every option on `app`: texts into `given`, values CLI11 can read into `o`, the integer flags
// and the backends' flags into theirs.
void add_options(CLI::App& app, GivenText& given, Options& o, std::vector<IntegerFlag>& integers,
                 std::vector<DeclaredFlag>& flags, const std::vector<const CollectiveSpec*>& specs,
                 std::span<const BackendDescriptor* const> backends) {
  app.add_option(
      "tests", given.tests,
      fmt::format("Tests, comma-separated, or 'all' (default all_reduce): {}", test_names(specs)));
  app.add_option("-b,--minbytes", given.min_bytes, "Smallest size (default 32M)");
  app.add_option("-e,--maxbytes", given.max_bytes, "Largest size (default 32M)");
  app.add_option("-f,--stepfactor", given.factor, "Multiply the size by this factor (>= 2)");
  app.add_option("-i,--stepbytes", given.step, "Or add this many bytes per step (default 1M)");
  app.add_option(
      "-d,--datatype", given.dtypes,
      fmt::format("Element type(s), comma-separated, or 'all': {} (default float)", dtype_names()));
  app.add_option(
      "-o,--op", given.ops,
      fmt::format("Reduction(s), comma-separated, or 'all': {} (default sum)", op_names()));
  for (auto& flag : integers) app.add_option(std::string(flag.flags), flag.text, flag.help);
  app.add_option("--backend", o.backend,
                 fmt::format("{} (default: nccl when a GPU is usable, else mpi)",
                             backend_names(backends, ", ")));
  // Each backend's own options, once per flag however many backends declare it.
  for (auto& flag : flags) app.add_option(std::string(flag.option->flags), flag.value, flag.help);
  app.add_option("--jsonl", o.jsonl, "Append results as JSON Lines to this file");
  app.add_option("-J,--output_file", o.nccl_tests_json,
                 "Also write nccl-tests' JSON (-J of nccl-tests 2.19) to this file");
  app.add_option("-T,--timeout", given.timeout,
                 "Seconds an operation may take before the run is aborted (exit 3); 0 = never "
                 "(default 300)");
  app.add_option("--min-busbw", given.min_busbw,
                 "Exit 1 when the average busbw (GB/s) of the run falls below this (also "
                 "NCCL_TESTS_MIN_BW, with nccl-tests' 10% allowance)");
  app.add_option("--pairs", given.pairs,
                 "Point-to-point pairing: first (0<->1) or all (i<->i+N/2 concurrently)");
  app.add_option("--buffers", given.buffers,
                 "rotate (each operation the next slice of a buffer sized for the largest size, "
                 "as nccl-tests) or fixed (the same slice every time, caches warm, as OSU); "
                 "default rotate");
  app.add_option("--precision", given.precision,
                 "Time each size until the 95% confidence interval of its time is within this "
                 "of it (e.g. 1%), in repeated batches, instead of -n iterations");
  app.add_option("--max-time", given.max_time,
                 "With --precision: seconds a size may take; a size that runs out is recorded as "
                 "not converged (default 10)");
  app.add_option("--split", given.split,
                 "Run the tests in groups at the same time: node (each node alone), rail (one "
                 "rank per node, same local rank), pairs (a tournament of node pairs, N-1 "
                 "rounds), sample:K (K rounds of random node pairs), or nccl-tests "
                 "(NCCL_TESTS_SPLIT / NCCL_TESTS_SPLIT_MASK)");
  app.add_flag("-q,--quiet", o.quiet, "No table on stdout (results only in --jsonl)");
  // Every field of the request that none of the options above reads: a field added to
  // MeasureRequest is an option of collbench with no edit here.
  add_request_options(app, given.request, "Options",
                      [](std::string_view help, std::string_view) { return std::string(help); });
}

// The test list: canonical names, `all` expanded.
void read_tests(const GivenText& given, const std::vector<const CollectiveSpec*>& specs,
                Options& o) {
  const std::string given_tests = fmt::format("{}", fmt::join(given.tests, ","));
  const std::vector<std::string> test_items = split_commas(
      "the test list", given.tests.empty() ? std::vector<std::string>{"all_reduce"} : given.tests);
  require_items("the test list", given_tests, test_items.size(),
                fmt::format("{}, or all", test_names(specs)));
  for (const auto& test : test_items) {
    if (test == "all") {
      o.all_tests = true;
      for (const auto* spec : specs) o.tests.emplace_back(spec->name);
      continue;
    }
    const CollectiveSpec* spec = find_spec(specs, test);
    if (!spec) throw_usage("unknown test '{}'; known tests: {}, or all", test, test_names(specs));
    o.tests.emplace_back(spec->name);
  }
  refuse_duplicates("the test list", given_tests, o.tests,
                    [](const std::string& test) { return test; });
}

// -b, -e, -f, -i: the sweep's sizes.
void read_sizes(const GivenText& given, Options& o) {
  if (!given.min_bytes.empty()) o.min_bytes = parse_size_flag("-b", given.min_bytes);
  if (!given.max_bytes.empty()) o.max_bytes = parse_size_flag("-e", given.max_bytes);
  if (o.min_bytes > o.max_bytes) {
    throw_usage("-b {} is larger than -e {}; the sweep runs from -b up to -e",
                given.min_bytes.empty() ? "32M" : given.min_bytes,
                given.max_bytes.empty() ? "32M" : given.max_bytes);
  }
  if (!given.factor.empty()) {
    o.step_factor = static_cast<std::uint64_t>(parse_integer(
        "-f", given.factor, 2, 1 << 20,
        "a whole factor of at least 2 and at most 1048576 (2^20); use -i for a fixed step"));
  }
  if (!given.factor.empty() && !given.step.empty()) {
    throw_usage(
        "-f {} and -i {}: give one: -f multiplies each size by a factor, -i adds a step to it",
        given.factor, given.step);
  }
  if (!given.step.empty()) {
    o.step_bytes = parse_size_flag("-i", given.step);
    if (o.step_bytes == 0) throw_usage("-i 0: the step must be at least 1 byte");
  }
  // Every size is held in memory and measured: a step of a few bytes up to gigabytes would
  // exhaust memory before the first measurement.
  constexpr std::uint64_t kMaxSizes = 1000000;
  if (o.step_factor == 0 && (o.max_bytes - o.min_bytes) / o.step_bytes >= kMaxSizes) {
    throw_usage(
        "-b {} -e {} -i {}: {} sizes, more than the {} a sweep may hold; raise -i or multiply "
        "with -f",
        o.min_bytes, o.max_bytes, o.step_bytes, (o.max_bytes - o.min_bytes) / o.step_bytes + 1,
        kMaxSizes);
  }
}

// Counts and switches: the integer flags, times, bandwidth floors, pairing, buffers, --split and
// --precision, and the combinations they may not form.
void read_counts(const CLI::App& app, const GivenText& given,
                 const std::vector<IntegerFlag>& integers, Options& o) {
  for (const auto& flag : integers) {
    if (!flag.text.empty())
      flag.store(parse_integer(flag.spelling(), flag.text, flag.min, flag.max, flag.accepted));
  }
  if (!given.timeout.empty()) o.timeout_s = parse_seconds("--timeout", given.timeout);
  if (!given.min_busbw.empty()) o.min_busbw = parse_bandwidth("--min-busbw", given.min_busbw);
  if (const char* env = std::getenv("NCCL_TESTS_MIN_BW")) {
    o.nccl_tests_min_bw = parse_bandwidth("NCCL_TESTS_MIN_BW", env);
  }
  if (!given.pairs.empty()) {
    if (given.pairs == "first")
      o.pairs = PairMode::kFirst;
    else if (given.pairs == "all")
      o.pairs = PairMode::kAll;
    else
      throw_usage("--pairs {}: expected first (rank 0 <-> 1) or all (every i <-> i+N/2)",
                  given.pairs);
  }
  if (!given.buffers.empty()) {
    if (given.buffers == "rotate")
      o.buffers = BufferPolicy::kRotate;
    else if (given.buffers == "fixed")
      o.buffers = BufferPolicy::kFixed;
    else
      throw_usage(
          "--buffers {}: expected rotate (a new slice each operation) or fixed (the same slice)",
          given.buffers);
  }
  if (app.count("--split") > 0) {
    o.split = parse_split(given.split, [](const char* name) { return std::getenv(name); });
    o.split->seed = o.seed();
    o.split_text = describe_split(*o.split);
  }
  if (!given.precision.empty()) o.precision = parse_precision(given.precision);
  if (!given.max_time.empty()) {
    const auto [ptr, ec] = std::from_chars(
        given.max_time.data(), given.max_time.data() + given.max_time.size(), o.max_time_s);
    if (ec != std::errc() || ptr != given.max_time.data() + given.max_time.size() ||
        !(o.max_time_s > 0) || !(o.max_time_s <= 1e6)) {
      throw_usage("--max-time {}: expected seconds per size, above 0 and at most 1000000",
                  given.max_time);
    }
  }
  check_precision(o, !given.max_time.empty());
  check_combinations(o);
}

// -d and -o. Given but empty ('' or ',') is refused, not taken as the default.
void read_types(const CLI::App& app, const GivenText& given, Options& o) {
  if (app.count("--datatype") > 0) {
    const auto items = split_commas("-d", {given.dtypes});
    require_items("-d", given.dtypes, items.size(), fmt::format("{}, or all", dtype_names()));
    o.dtypes.clear();
    for (const auto& item : items) {
      if (item == "all") {
        o.all_dtypes = true;
        o.dtypes.insert(o.dtypes.end(), all_dtypes().begin(), all_dtypes().end());
        continue;
      }
      const auto t = parse_dtype(item);
      if (!t) throw_usage("-d {}: unknown dtype; accepted: {}, or all", item, dtype_names());
      o.dtypes.push_back(*t);
    }
    refuse_duplicates("-d", given.dtypes, o.dtypes, [](DType t) { return name(t); });
  }
  if (app.count("--op") > 0) {
    const auto items = split_commas("-o", {given.ops});
    require_items("-o", given.ops, items.size(), fmt::format("{}, or all", op_names()));
    o.ops.clear();
    for (const auto& item : items) {
      if (item == "all") {
        o.ops.insert(o.ops.end(), all_ops().begin(), all_ops().end());
        continue;
      }
      const auto op = parse_op(item);
      if (!op) throw_usage("-o {}: unknown reduction; accepted: {}, or all", item, op_names());
      o.ops.push_back(*op);
    }
    refuse_duplicates("-o", given.ops, o.ops, [](ReduceOp op) { return name(op); });
  }
}

// --jsonl and -J: each names a file, and not the same one.
void check_outputs(const CLI::App& app, const Options& o) {
  // An output given as '' would silently write nothing.
  if (app.count("--jsonl") > 0 && o.jsonl.empty()) {
    throw_usage("--jsonl '': names no file; give the path of the results file to append to");
  }
  if (app.count("--output_file") > 0 && o.nccl_tests_json.empty()) {
    throw_usage("-J '': names no file; give the path of the JSON file to write");
  }
  // Two outputs that are one file would overwrite each other: -J's finished document replaces
  // the file it names, results appended to it by --jsonl included.
  if (!o.jsonl.empty() && !o.nccl_tests_json.empty() && same_file(o.jsonl, o.nccl_tests_json)) {
    throw_usage("--jsonl {} and -J {} are one file; give each output a file of its own", o.jsonl,
                o.nccl_tests_json);
  }
}

// The backends' own options as given, checked against the backend named, or else against every
// backend that takes them.
void read_backend_options(const CLI::App& app, const std::vector<DeclaredFlag>& flags,
                          std::span<const BackendDescriptor* const> backends, Options& o) {
  for (const auto& flag : flags) {
    if (flag.value.empty()) continue;
    o.backend_options.push_back({std::string(flag.option->key), flag.spelling(app), flag.value});
  }
  if (!o.backend.empty()) {
    const BackendDescriptor* chosen = find_backend(backends, o.backend);
    if (!chosen) {
      throw_usage("--backend {}: unknown backend; accepted: {}", o.backend,
                  backend_names(backends, ", "));
    }
    // Named explicitly: its options are checked now, before anything starts.
    backend_args(o, *chosen, backends);
  } else {
    // Any backend may run: each value must suit at least one backend that takes the option.
    for (const auto& given : o.backend_options) check_for_some_backend(given, backends);
  }
}

}  // namespace

ParseResult parse_command_line(int argc, const char* const* argv,
                               const std::vector<const CollectiveSpec*>& specs,
                               std::span<const BackendDescriptor* const> backends) {
  ParseResult result;
  Options& o = result.options;
  for (int i = 0; i < argc; ++i) o.argv.emplace_back(argv[i]);

  CLI::App app{"collbench: collective communication benchmark (nccl-tests compatible options)",
               "collbench"};
  app.footer(kExamples);
  app.set_version_flag("--version", collbench_version());
  app.get_formatter()->column_width(30);

  GivenText given;
  std::vector<IntegerFlag> integers = integer_flags(o);
  std::vector<DeclaredFlag> flags = declared_flags(backends);
  add_options(app, given, o, integers, flags, specs, backends);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    result.exit_text = app.help();
    return result;
  } catch (const CLI::CallForAllHelp&) {
    result.exit_text = app.help();
    return result;
  } catch (const CLI::CallForVersion&) {
    result.exit_text = collbench_version() + "\n";
    return result;
  } catch (const CLI::ParseError& e) {
    throw_usage("{}; run collbench --help for the options", e.what());
  }
  // An option given an empty value ('-n ""') would silently keep its default, and one given no
  // value takes the next option as its value.
  refuse_missing_values(app, "collbench");

  read_request_texts(given.request, o.request);
  // The request's fields read any whole number; the pattern's seed is 32 bits.
  if (collbench::given(given.request, "--seed")) {
    parse_integer("--seed", given.request.find("--seed")->second, 0, 0xffffffffLL,
                  "0 to 4294967295");
  }
  read_tests(given, specs, o);
  read_sizes(given, o);
  read_counts(app, given, integers, o);
  read_types(app, given, o);
  check_outputs(app, o);
  read_backend_options(app, flags, backends, o);
  return result;
}

void validate_for_world(const Options& options, int nranks,
                        const std::vector<const CollectiveSpec*>& specs) {
  std::vector<const CollectiveSpec*> runnable;
  for (const auto& test : options.tests) {
    const CollectiveSpec* spec = find_spec(specs, test);
    if (!spec) continue;
    if (spec->kind == TestKind::kPointToPoint && nranks < 2) {
      // Under `all` the runner reports it as not measured, as any test the job cannot run.
      if (options.all_tests) continue;
      throw_usage(
          "{} is a point-to-point test and needs at least 2 ranks, but the job has {}; "
          "launch with mpirun -np 2 (or more)",
          test, nranks);
    }
    runnable.push_back(spec);
  }
  if (options.root >= nranks) {
    throw_usage("-r {}: the root must be a rank of the job (0 to {})", options.root, nranks - 1);
  }
  // Sizes below one element per rank are skipped; a range of only such sizes (-b 0 -e 1K -f 2
  // is 0 B alone) would measure nothing and exit 0.
  if (runnable.empty()) return;
  const auto measures = [&](std::uint64_t size) {
    for (const auto* spec : runnable) {
      for (DType dtype : options.dtypes) {
        const std::size_t es = size_of(dtype);
        if (spec->layout(size / es, nranks, es).param_count > 0) return true;
      }
    }
    return false;
  };
  const auto sizes =
      size_sequence(options.min_bytes, options.max_bytes, options.step_factor, options.step_bytes);
  if (std::ranges::any_of(sizes, measures)) return;
  // The smallest power of two that measures something, for the fix (collectives that split the
  // buffer between ranks round each share down to whole 16-byte units, as nccl-tests does).
  std::uint64_t smallest = 1;
  while (smallest < (std::uint64_t{1} << 62) && !measures(smallest)) smallest *= 2;
  std::vector<std::string> shown;
  for (std::uint64_t size : sizes) {
    if (shown.size() == 4) {
      shown.emplace_back("...");
      break;
    }
    shown.push_back(format_bytes(size));
  }
  throw_usage(
      "-b {} -e {}: every size of the sweep ({}) holds less than one element per rank on {} "
      "rank{}, so nothing would be measured; raise -e to {} or more{}",
      options.min_bytes, options.max_bytes, fmt::join(shown, ", "), nranks, nranks == 1 ? "" : "s",
      smallest,
      options.min_bytes == 0 && options.step_factor >= 2 ? " and -b above 0 (0 times -f stays 0)"
                                                         : "");
}

}  // namespace collbench
