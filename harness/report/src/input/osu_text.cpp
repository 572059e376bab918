#include "input/osu_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "collbench/text.h"
#include "input/import_text.h"
#include "input/nccl_tests_infer.h"

namespace collbench::report::detail {

namespace {

constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();

constexpr std::string_view kLacks =
    "not in this output, so shown as unknown: the number of ranks of a collective unless a "
    "launcher's command line before it or --ranks gives it (and so the bus bandwidth of "
    "all_reduce and reduce_scatter), whether -l (in-place) was given (rows are read as "
    "out-of-place, OSU's default), warm-up iterations, per-iteration times, the slowest rank and "
    "host, hosts, devices and the network used";

// How an OSU test measures, and what collbench calls it.
struct OsuTest {
  std::string_view osu;      ///< OSU's name, lower case, '-' and '_' as spaces
  std::string_view program;  ///< the program that prints it
  std::string_view test;     ///< collbench's
  enum Kind { kLatency, kBandwidth, kBidirectional, kCollective } kind;
  /// busbw = algbw (the bus factor is 1); else it needs the rank count, which OSU does not print.
  bool factor_one;
  /// OSU's size is each rank's part, collbench's the whole buffer (n × that): read only where
  /// the rank count is known.
  bool per_rank_size;
};

constexpr OsuTest kTests[] = {
    {"latency", "osu_latency", "latency", OsuTest::kLatency, true, false},
    {"bandwidth", "osu_bw", "bw", OsuTest::kBandwidth, true, false},
    {"bi directional bandwidth", "osu_bibw", "bibw", OsuTest::kBidirectional, true, false},
    {"allreduce latency", "osu_allreduce", "all_reduce", OsuTest::kCollective, false, false},
    {"reduce scatter latency", "osu_reduce_scatter", "reduce_scatter", OsuTest::kCollective, false,
     false},
    {"broadcast latency", "osu_bcast", "broadcast", OsuTest::kCollective, true, false},
    {"reduce latency", "osu_reduce", "reduce", OsuTest::kCollective, true, false},
    {"allgather latency", "osu_allgather", "all_gather", OsuTest::kCollective, false, true},
    {"all to all personalized exchange latency", "osu_alltoall", "alltoall", OsuTest::kCollective,
     false, true},
};

// The text of an OSU comment line, after its '#'; a line that lost its '#' (markdown reads
// "# Size ..." as a heading) is taken as it is.
std::string_view uncommented(std::string_view line) {
  return line.starts_with('#') ? trim(line.substr(1)) : line;
}

std::string normalized(std::string_view name) {
  std::string out;
  for (const char c : name) {
    out +=
        c == '-' || c == '_' ? ' ' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

// "MPI_CHAR" and the other datatypes osu -T offers.
std::optional<DType> dtype_of(std::string_view mpi) {
  static constexpr std::pair<std::string_view, DType> kTypes[] = {
      {"MPI_CHAR", DType::kInt8},           {"MPI_SIGNED_CHAR", DType::kInt8},
      {"MPI_UNSIGNED_CHAR", DType::kUint8}, {"MPI_BYTE", DType::kUint8},
      {"MPI_INT", DType::kInt32},           {"MPI_UNSIGNED", DType::kUint32},
      {"MPI_LONG_LONG", DType::kInt64},     {"MPI_FLOAT", DType::kFloat},
      {"MPI_DOUBLE", DType::kDouble}};
  for (const auto& [name, type] : kTypes) {
    if (name == mpi) return type;
  }
  return std::nullopt;
}

// The columns of one table.
struct Layout {
  std::size_t size = kNone, time = kNone, min = kNone, max = kNone, iterations = kNone,
              bandwidth = kNone, validation = kNone;
  std::size_t columns = 0;
};

// "Size       Avg Latency(us)   Min Latency(us) ...": columns are two or more blanks apart.
Layout parse_layout(std::string_view header) {
  std::vector<std::string> names;
  std::size_t i = 0;
  while (i < header.size()) {
    std::size_t end = header.find("  ", i);
    if (end == std::string_view::npos) end = header.size();
    std::string name;
    for (const char c : trim(header.substr(i, end - i))) {
      if (c != ' ') name += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    if (!name.empty()) names.push_back(std::move(name));
    i = end;
    while (i < header.size() && header[i] == ' ') ++i;
  }
  Layout layout;
  layout.columns = names.size();
  for (std::size_t c = 0; c < names.size(); ++c) {
    const std::string& n = names[c];
    if (n == "size") {
      layout.size = c;
    } else if (n.starts_with("avglatency") || n.starts_with("latency")) {
      layout.time = c;
    } else if (n.starts_with("minlatency")) {
      layout.min = c;
    } else if (n.starts_with("maxlatency")) {
      layout.max = c;
    } else if (n == "iterations") {
      layout.iterations = c;
    } else if (n.starts_with("bandwidth") || n == "mb/s") {
      layout.bandwidth = c;
    } else if (n == "validation") {
      layout.validation = c;
    }
  }
  return layout;
}

class OsuTextImporter final : public Importer {
 public:
  explicit OsuTextImporter(ImportSink sink) : sink_(std::move(sink)) {}

  void read_line(const Line& line) override {
    const std::string_view text = strip_launcher_prefix(line.text);
    if (is_osu_banner(text)) {
      begin_run(text, line.number);
    } else if (text.starts_with('#') || text.starts_with("Size ") ||
               text.starts_with("Datatype:")) {
      read_comment(uncommented(text), line.number);
    } else if (table_ && !text.empty() && text.front() >= '0' && text.front() <= '9') {
      read_row(text, line);
    } else if (text.find("osu_") != std::string_view::npos) {
      // Perhaps the command that runs the next test: its launcher may say on how many ranks.
      command_ = std::string(text);
      command_line_ = line.number;
    }
    if (sink_.in_run()) sink_.hash_line(text);
  }

  void finish() override {
    report_skipped();
    sink_.finish(kLacks);
  }

 private:
  void begin_run(std::string_view banner, std::uint64_t line) {
    report_skipped();
    sink_.begin_run(line);
    table_.reset();
    dtype_ = DType::kInt8;  // OSU's buffers are bytes; 7.x names the datatype (-T)
    dtype_known_ = true;
    const auto w = words(uncommented(banner));
    const auto test_word = std::find(w.begin(), w.end(), "Test");
    std::string name;
    for (auto it = w.begin() + std::min<std::ptrdiff_t>(2, w.end() - w.begin()); it < test_word;
         ++it) {
      if (!name.empty()) name += ' ';
      name += *it;
    }
    osu_name_ = name;
    const std::string key = normalized(name);
    test_ = nullptr;
    for (const auto& t : kTests) {
      if (t.osu == key) test_ = &t;
    }
    const std::string_view library = w.size() > 1 ? w[1] : std::string_view();
    sink_.set_backend(starts_with_nocase(library, "NCCL") ? "nccl" : "mpi");
    RunContext& c = sink_.context();
    if (test_word != w.end() && test_word + 1 != w.end() && test_word[1].starts_with('v')) {
      c.libraries["osu"] = std::string(test_word[1].substr(1));
    }
    facts_ = RunFacts{};
    facts_.buffers = BufferPolicy::kFixed;  // every call on the same buffers
    if (test_ && test_->kind == OsuTest::kCollective) {
      facts_.mode = MeasureMode::kBlocking;  // every call is timed alone, between barriers
      read_ranks(line);
    } else if (test_) {
      facts_.nranks = 2;  // the point-to-point tests require exactly two
      c.nranks = 2;
    }
    command_.clear();
    if (!test_) {
      sink_.note_run(
          fmt::format("OSU test \"{}\" has no collbench equivalent; its rows are not read", name));
    }
  }

  // A collective's rank count: what the launcher's command line before its banner states when
  // that line runs this test's program, else --ranks.
  void read_ranks(std::uint64_t banner_line) {
    const auto launch = command_.empty() ? std::nullopt : launch_of(command_, test_->program);
    const int stated = launch ? launch->ranks : 0;
    const int ranks = sink_.settle_ranks(stated);
    if (ranks == 0) return;
    facts_.nranks = ranks;
    sink_.context().nranks = ranks;
    if (stated == 0) return;
    std::string nodes;
    if (launch->nodes > 0) {
      facts_.nodes = launch->nodes;
      sink_.context().nodes = launch->nodes;
      nodes = fmt::format(" on {} node(s)", launch->nodes);
    }
    sink_.note(banner_line, fmt::format("{} rank(s){}, as the command line on line {} that runs "
                                        "{} states",
                                        ranks, nodes, command_line_, test_->program));
  }

  void read_comment(std::string_view comment, std::uint64_t line) {
    constexpr std::string_view kDatatype = "Datatype:";
    if (comment.starts_with(kDatatype)) {
      std::string_view type = trim(comment.substr(kDatatype.size()));
      if (type.ends_with('.')) type.remove_suffix(1);
      const auto dtype = dtype_of(type);
      dtype_ = dtype.value_or(dtype_);
      dtype_known_ = dtype.has_value();
      if (!dtype) {
        sink_.problem(Diagnostic::Kind::kBadRecord, line,
                      fmt::format("OSU datatype \"{}\" is not one collbench knows; its table is "
                                  "skipped",
                                  type));
      }
      table_.reset();
    } else if (comment.starts_with("Size")) {
      table_.reset();
      if (!sink_.in_run() || !test_ || !dtype_known_) return;
      Layout layout = parse_layout(comment);
      const bool bandwidth =
          test_->kind == OsuTest::kBandwidth || test_->kind == OsuTest::kBidirectional;
      if (layout.size == kNone || (bandwidth ? layout.bandwidth : layout.time) == kNone) {
        sink_.problem(Diagnostic::Kind::kBadRecord, line,
                      fmt::format("OSU table without a size or {} column; skipped",
                                  bandwidth ? "bandwidth" : "latency"));
        return;
      }
      table_ = layout;
    }
  }

  void read_row(std::string_view text, const Line& line) {
    const Layout& layout = *table_;
    const auto w = words(text);
    if (!sink_.row_complete(line, w.size(), layout.columns)) return;
    const auto value = [&w](std::size_t column) -> std::optional<double> {
      if (column == kNone) return std::nullopt;
      // A negative value is kept: the row is then a bad record (row_check.h), not one with
      // the value left out.
      const auto v = parse_number<double>(w[column]);
      return v && std::isfinite(*v) ? v : std::nullopt;
    };
    const auto bytes = parse_number<std::uint64_t>(w[layout.size]);
    const bool bandwidth_test =
        test_->kind == OsuTest::kBandwidth || test_->kind == OsuTest::kBidirectional;
    const auto measured = value(bandwidth_test ? layout.bandwidth : layout.time);
    if (!bytes || !measured || (bandwidth_test && *measured <= 0)) {
      sink_.problem(Diagnostic::Kind::kBadRecord, line.number,
                    "size or measurement is not a number; skipped");
      return;
    }
    const int ranks = stated(facts_.nranks) ? facts_.nranks : 0;
    if (test_->per_rank_size && ranks == 0) {
      ++skipped_rows_;
      return;
    }
    ReadRow& row = sink_.add_row(line.number, facts_);
    row.test = Name(test_->test);
    // collbench's size of all_gather and alltoall is the whole buffer, its count each rank's
    // part (all_gather) or each peer's (alltoall), as NCCL's and nccl-tests' are.
    row.bytes = test_->per_rank_size ? *bytes * static_cast<std::uint64_t>(ranks) : *bytes;
    row.count = *bytes / size_of(dtype_);
    row.dtype = dtype_;
    if (is_reduction_test(test_->test)) row.op = ReduceOp::kSum;  // OSU reduces with MPI_SUM
    const double b = static_cast<double>(row.bytes);
    // OSU's MB/s are 1e6 bytes/s, and bytes per µs are MB/s: GB/s = MB/s / 1000.
    double us = *measured, algbw = *measured > 0 ? b / *measured / 1e3 : kUnknown;
    if (bandwidth_test) {
      // A message's time at that bandwidth; bibw's counts both directions, as collbench's does.
      algbw = *measured / 1e3;
      us = (test_->kind == OsuTest::kBidirectional ? 2 * b : b) / *measured;
    }
    RowTimes times = headline_times(us);
    if (test_->kind == OsuTest::kCollective) {
      // OSU's average is over ranks, its min and max (-f) the fastest and slowest rank's.
      times.mean = us;
      times.fastest = value(layout.min).value_or(kUnknown);
      times.slowest = value(layout.max).value_or(kUnknown);
    } else {
      row.pair = Pair{0, 1};
    }
    row.time_us = times;
    if (std::isfinite(algbw)) {
      row.algbw_gbps = algbw;
      if (test_->factor_one) {
        row.busbw_gbps = algbw;
      } else if (const auto factor = nccl_tests_bus_factor(test_->test, ranks)) {
        row.busbw_gbps = algbw * *factor;  // nccl-tests' and collbench's factor of the test
      }
    }
    if (const auto iterations = value(layout.iterations);
        iterations && *iterations >= 1 && *iterations < 1e9) {
      row.iterations = static_cast<int>(*iterations);
    }
    if (layout.validation != kNone) {
      if (w[layout.validation] == "Pass") row.wrong = 0;
      if (w[layout.validation] == "Fail") row.status = RowStatus::kWrong;
    }
  }

  void report_skipped() {
    if (skipped_rows_ == 0) return;
    sink_.note_run(fmt::format(
        "OSU {}: OSU's size is each rank's part and OSU does not print the number of ranks, so "
        "the size collbench uses (the whole buffer, ranks × that) is unknown; {} row(s) not read: "
        "give the rank count with --ranks N, or keep the launcher's command line (mpirun -np N "
        "... {}) above the output",
        osu_name_, skipped_rows_, test_ ? test_->program : "osu_..."));
    skipped_rows_ = 0;
  }

  ImportSink sink_;
  const OsuTest* test_ = nullptr;
  RunFacts facts_;
  std::string osu_name_;
  DType dtype_ = DType::kInt8;
  bool dtype_known_ = true;
  std::optional<Layout> table_;
  std::uint64_t skipped_rows_ = 0;
  std::string command_;  ///< the last line naming an OSU program before a banner
  std::uint64_t command_line_ = 0;
};

}  // namespace

bool is_osu_banner(std::string_view line) {
  const std::string_view comment = uncommented(line);
  if (!comment.starts_with("OSU ")) return false;
  if (line.starts_with('#')) return comment.find(" Test") != std::string_view::npos;
  // Without its '#' the line is prose-like: only "OSU <library> <name> Test" with nothing after
  // but its version ("v7.4") is a banner.
  const auto w = words(comment);
  const auto test = std::find(w.begin(), w.end(), "Test");
  if (test == w.end() || test - w.begin() < 3) return false;
  if (test + 1 == w.end()) return true;
  const std::string_view version = test[1];
  return test + 2 == w.end() && version.size() > 1 && version[0] == 'v' && version[1] >= '0' &&
         version[1] <= '9';
}

std::unique_ptr<Importer> make_osu_text_importer(ImportSink sink) {
  return std::make_unique<OsuTextImporter>(std::move(sink));
}

}  // namespace collbench::report::detail
