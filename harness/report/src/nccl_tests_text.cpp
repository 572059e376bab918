#include "nccl_tests_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "collbench/text.h"
#include "import_text.h"

namespace collbench::report::detail {

namespace {

constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();

// What the text of nccl-tests' output does not hold, for the file's note.
constexpr std::string_view kLacks =
    "not in this output, so shown as unknown: per-iteration times, the slowest rank and host, "
    "which rank aggregate the time is (-a; nccl-tests' default is the mean), the network used "
    "and the environment";

// The text after a comment's '#', trimmed; nullopt for a line that is not a comment.
std::optional<std::string_view> comment_of(std::string_view line) {
  if (!line.starts_with('#')) return std::nullopt;
  line.remove_prefix(1);
  while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
  return line;
}

// The columns of one table, by position.
struct Layout {
  struct Group {
    std::size_t time = kNone, algbw = kNone, busbw = kNone, wrong = kNone;
    bool wrong_counts = true;  ///< "#wrong" counts elements; old versions' "error" does not
  };
  std::size_t size = kNone, count = kNone, type = kNone, redop = kNone, root = kNone;
  std::vector<Group> groups;  ///< out-of-place, then in-place
  std::size_t needed = 0;     ///< words a row has at least
};

// The layout a header line describes: the words after "#" name the columns, and the first
// time/algbw/busbw/#wrong run is out-of-place, the second in-place.
std::optional<Layout> parse_layout(std::string_view line) {
  const auto comment = comment_of(line);
  if (!comment) return std::nullopt;
  static const std::set<std::string_view> kIgnored{"i_min", "i_max", "i_p99", "i_cv%", "timestamp"};
  Layout layout;
  const auto names = words(*comment);
  for (std::size_t i = 0; i < names.size(); ++i) {
    const std::string_view n = names[i];
    std::size_t* slot = nullptr;
    if (n == "size") {
      slot = &layout.size;
    } else if (n == "count") {
      slot = &layout.count;
    } else if (n == "type") {
      slot = &layout.type;
    } else if (n == "redop") {
      slot = &layout.redop;
    } else if (n == "root") {
      slot = &layout.root;
    } else if (n == "time" || n == "cputime") {
      layout.groups.emplace_back().time = i;
    } else if (!layout.groups.empty() && n == "algbw") {
      slot = &layout.groups.back().algbw;
    } else if (!layout.groups.empty() && n == "busbw") {
      slot = &layout.groups.back().busbw;
    } else if (!layout.groups.empty() && (n == "#wrong" || n == "error")) {
      slot = &layout.groups.back().wrong;
      layout.groups.back().wrong_counts = n == "#wrong";
    } else if (!kIgnored.count(n)) {
      return std::nullopt;  // a column nccl-tests does not print
    }
    if (slot) {
      if (*slot != kNone) return std::nullopt;
      *slot = i;
    }
    if (n != "timestamp") layout.needed = i + 1;
  }
  if (layout.size == kNone || layout.count == kNone || layout.type == kNone ||
      layout.groups.empty() || layout.groups.size() > 2) {
    return std::nullopt;
  }
  for (const auto& g : layout.groups) {
    if (g.algbw == kNone || g.busbw == kNone) return std::nullopt;
  }
  return layout;
}

// What the banner and device lines of a run state.
struct Run {
  bool has_banner = false;  ///< its "# nThread" line was read
  bool has_table = false;
  std::string test;     ///< from "# Collective test starting"
  std::string program;  ///< from a "<test>_perf" command line before the run
  std::string tests_version, nccl_version;
  int warmup = kNotStated, iterations = kNotStated, graph = 0;
  bool blocking = false;
  std::map<int, std::pair<std::string, std::string>> ranks;  ///< rank -> host, device model
  bool test_reported = false;                                ///< its missing test name was reported
};

// The "key value" pairs of the banner: "nThread 1 nGpus 8 minBytes 8 ... warmup iters: 5
// iters: 20 agg iters: 1 validation: 1 graph: 0".
void read_banner(std::string_view comment, Run& run) {
  const auto w = words(comment);
  for (std::size_t i = 0; i + 1 < w.size(); ++i) {
    const auto value = parse_number<int>(w[i + 1]);
    if (!value || *value < 0) continue;
    const std::string_view before = i > 0 ? w[i - 1] : std::string_view();
    if (w[i] == "iters:" && before == "warmup") {
      run.warmup = *value;
    } else if (w[i] == "iters:" && before != "agg") {
      run.iterations = *value;
    } else if (w[i] == "graph:") {
      run.graph = *value;
    }
  }
}

// "nccl-tests version 2.19.4 nccl-headers=21903 nccl-library=21903".
void read_version(std::string_view comment, Run& run) {
  const auto w = words(comment);
  if (w.size() >= 3) run.tests_version = std::string(w[2]);
  for (const auto word : w) {
    constexpr std::string_view kLibrary = "nccl-library=";
    if (!word.starts_with(kLibrary)) continue;
    if (const auto code = parse_number<long>(word.substr(kLibrary.size())); code && *code > 0) {
      run.nccl_version = nccl_version_text(*code);
    }
  }
}

// "Rank  3 Group  0 Pid 584419 on        dkh device  3 [0000:58:00] NVIDIA A100-SXM4-80GB" (old
// versions lack "Group").
void read_rank(std::string_view comment, Run& run) {
  const auto w = words(comment);
  if (w.size() < 2 || w[0] != "Rank") return;
  const auto rank = parse_number<int>(w[1]);
  if (!rank || *rank < 0 || *rank > (1 << 24)) return;
  std::string host;
  for (std::size_t i = 2; i + 1 < w.size(); ++i) {
    if (w[i] == "on" && host.empty()) host = std::string(w[i + 1]);
  }
  // The device's name follows its PCI address: "[0000:58:00] NVIDIA A100-SXM4-80GB".
  const auto bracket = comment.find("] ");
  const std::string model(bracket == std::string_view::npos ? std::string_view()
                                                            : trim(comment.substr(bracket + 2)));
  run.ranks[*rank] = {host, model};
}

class NcclTestsTextImporter final : public Importer {
 public:
  NcclTestsTextImporter(ImportSink sink, std::string_view file_name)
      : sink_(std::move(sink)), file_program_(nccl_tests_program_test(file_name)) {}

  void read_line(const Line& line) override {
    const std::string_view text = strip_launcher_prefix(line.text);
    if (const auto comment = comment_of(text)) {
      read_comment(text, *comment, line.number);
    } else if (table_ && !text.empty() && text.front() >= '0' && text.front() <= '9') {
      read_row(text, line);
    } else if (const auto program = nccl_tests_program_test(text); !program.empty()) {
      pending_program_ = std::string(program);  // a command line: the next run's test
    }
    if (sink_.in_run()) sink_.hash_line(text);
  }

  void finish() override { sink_.finish(kLacks); }

 private:
  void begin_run(std::uint64_t line) {
    sink_.begin_run(line);
    run_ = Run{};
    run_.program = std::move(pending_program_);
    pending_program_.clear();
    table_.reset();
  }

  void read_comment(std::string_view text, std::string_view comment, std::uint64_t line) {
    if (comment.starts_with("nccl-tests version")) {
      begin_run(line);
      read_version(comment, run_);
    } else if (comment.starts_with("Collective test starting:")) {
      if (!sink_.in_run() || run_.has_banner || run_.has_table || !run_.test.empty()) {
        begin_run(line);
      }
      run_.test = std::string(nccl_tests_program_test(comment));
    } else if (is_nccl_tests_banner(text)) {
      if (!sink_.in_run() || run_.has_banner || run_.has_table) begin_run(line);
      run_.has_banner = true;
      read_banner(comment, run_);
    } else if (comment.starts_with("Blocking Enabled")) {
      run_.blocking = true;
    } else if (comment.starts_with("Rank ")) {
      if (!run_.has_table) read_rank(comment, run_);
    } else if (comment.starts_with("Out of bounds") || comment.starts_with("Avg bus bandwidth") ||
               comment.starts_with("Collective test concluded")) {
      table_.reset();
    } else if (auto layout = parse_layout(text)) {
      read_header(std::move(*layout), line);
    }
  }

  void read_header(Layout layout, std::uint64_t line) {
    if (!sink_.in_run()) begin_run(line);  // a table pasted without its banner
    if (!run_.has_table) start_table();
    run_.has_table = true;
    test_ = run_.test;
    if (test_.empty()) test_ = run_.program;
    if (test_.empty()) test_ = pending_program_;
    if (test_.empty()) test_ = file_program_;
    if (test_.empty()) {
      if (!run_.test_reported) {
        sink_.problem(Diagnostic::Kind::kBadRecord, line,
                      "nccl-tests table of a run that does not name its test (no \"# Collective "
                      "test starting\" line, as before nccl-tests 2.17, no <test>_perf command "
                      "before it, no <test>_perf in the file name); its rows are skipped: name "
                      "the file after the test, e.g. all_reduce_perf.log");
        run_.test_reported = true;
      }
      table_.reset();
      return;
    }
    test_name_ = Name(test_);
    table_ = std::move(layout);
  }

  // The first table of a run: what its banner and device lines said goes into its context.
  void start_table() {
    RunContext& c = sink_.context();
    std::map<std::string, std::vector<int>> hosts;
    for (const auto& [rank, where] : run_.ranks) {
      if (!where.first.empty()) hosts[where.first].push_back(rank);
      if (!where.second.empty()) sink_.add_device(where.second, 1);
    }
    for (auto& [name, ranks] : hosts) c.hosts.push_back({name, std::move(ranks), "", {}});
    facts_.nranks = run_.ranks.empty() ? kNotStated : run_.ranks.rbegin()->first + 1;
    facts_.nodes = hosts.empty() ? kNotStated : static_cast<int>(hosts.size());
    facts_.iterations = run_.iterations;
    facts_.warmup = run_.warmup;
    c.nranks = stated(facts_.nranks) ? facts_.nranks : 0;
    c.nodes = stated(facts_.nodes) ? facts_.nodes : 0;
    if (!run_.tests_version.empty()) c.libraries["nccl-tests"] = run_.tests_version;
    if (!run_.nccl_version.empty()) {
      c.libraries["nccl"] = run_.nccl_version;
      c.backend.library = "NCCL " + run_.nccl_version;
    }
    facts_.set_mode(run_.graph, run_.blocking);
  }

  void read_row(std::string_view text, const Line& line) {
    const Layout& layout = *table_;
    const auto w = words(text);
    if (!sink_.row_complete(line, w.size(), layout.needed)) return;
    std::string why;
    const auto bytes = parse_number<std::uint64_t>(w[layout.size]);
    const auto count = parse_number<std::uint64_t>(w[layout.count]);
    const auto dtype = parse_dtype(w[layout.type]);
    std::optional<ReduceOp> op;
    Nullable<int> root;
    if (!bytes || !count) why = "size or count is not a whole number";
    if (why.empty() && !dtype) {
      why = fmt::format("type \"{}\" is not one collbench knows", w[layout.type]);
    }
    if (why.empty() && is_reduction_test(test_)) {
      op = layout.redop == kNone ? std::nullopt : parse_op(w[layout.redop]);
      if (!op) {
        why = layout.redop == kNone
                  ? std::string("a reduction without a redop column")
                  : fmt::format("op \"{}\" has no collbench equivalent", w[layout.redop]);
      }
    }
    if (why.empty() && layout.root != kNone) {
      const auto value = parse_number<int>(w[layout.root]);
      if (!value || *value < -1) why = "root is not a rank or -1";
      if (value && *value >= 0) root = *value;
    }
    if (!why.empty()) {
      sink_.problem(Diagnostic::Kind::kBadRecord, line.number, why + "; skipped");
      return;
    }
    for (std::size_t g = 0; g < layout.groups.size(); ++g) {
      const auto& group = layout.groups[g];
      const auto time = parse_number<double>(w[group.time]);
      if (!time || !std::isfinite(*time) || *time < 0) {
        sink_.problem(Diagnostic::Kind::kBadRecord, line.number,
                      fmt::format("time \"{}\" is not a time; skipped", w[group.time]));
        continue;
      }
      ReadRow& row = sink_.add_row(line.number, facts_);
      row.test = test_name_;
      row.bytes = *bytes;
      row.count = *count;
      row.dtype = *dtype;
      row.op = op;
      row.root = root;
      row.placement = g == 0 ? Placement::kOutOfPlace : Placement::kInPlace;
      row.time_us = headline_times(*time);
      row.algbw_gbps = bandwidth(w[group.algbw]);
      row.busbw_gbps = bandwidth(w[group.busbw]);
      if (group.wrong != kNone && group.wrong_counts) {
        if (const auto wrong = parse_number<double>(w[group.wrong]); wrong && *wrong >= 0) {
          row.wrong = static_cast<std::int64_t>(std::llround(*wrong));
          if (*row.wrong > 0) row.status = RowStatus::kWrong;
        }
      }
    }
  }

  static Nullable<double> bandwidth(std::string_view text) {
    const auto value = parse_number<double>(text);
    // A negative bandwidth is kept, so that the row is a bad record (row_check.h).
    if (!value || !std::isfinite(*value)) return std::nullopt;
    return *value;
  }

  ImportSink sink_;
  std::string file_program_;
  std::string pending_program_;
  Run run_;
  std::optional<Layout> table_;
  std::string test_;
  Name test_name_;
  RunFacts facts_;
};

}  // namespace

bool is_nccl_tests_banner(std::string_view line) {
  const auto comment = comment_of(line);
  if (!comment) return false;
  return (comment->starts_with("nThread ") && comment->find(" nGpus ") != std::string_view::npos) ||
         comment->starts_with("nccl-tests version");
}

bool is_nccl_tests_header(std::string_view line) { return parse_layout(line).has_value(); }

std::unique_ptr<Importer> make_nccl_tests_text_importer(ImportSink sink,
                                                        std::string_view file_name) {
  return std::make_unique<NcclTestsTextImporter>(std::move(sink), file_name);
}

}  // namespace collbench::report::detail
