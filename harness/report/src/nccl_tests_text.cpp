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
#include "nccl_tests_infer.h"

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
  std::vector<Group> groups;            ///< out-of-place, then in-place
  std::size_t needed = 0;               ///< words a row has at least
  std::size_t out_of_place_needed = 0;  ///< words up to the end of the out-of-place half
};

// The layout a header line describes: the words after "#" name the columns, and the first
// time/algbw/busbw/#wrong run is out-of-place, the second in-place.
// A header that lost its '#' (markdown reads "# size count ..." as a heading) starts with "size".
std::optional<Layout> parse_layout(std::string_view line) {
  auto comment = comment_of(line);
  if (!comment && line.starts_with("size ")) comment = line;
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
  for (const std::size_t column :
       {layout.size, layout.count, layout.type, layout.redop, layout.root, layout.groups[0].time,
        layout.groups[0].algbw, layout.groups[0].busbw, layout.groups[0].wrong}) {
    if (column != kNone)
      layout.out_of_place_needed = std::max(layout.out_of_place_needed, column + 1);
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
      if (inferring_) {
        held_.push_back({std::string(text), line.number, line.unterminated});
      } else {
        read_row(text, line);
      }
    } else if (auto layout = parse_layout(text)) {
      read_header(std::move(*layout), line.number);
    } else if (const auto program = nccl_tests_program_test(text); !program.empty()) {
      pending_program_ = std::string(program);  // a command line: the next run's test
    }
    if (sink_.in_run()) sink_.hash_line(text);
  }

  void finish() override {
    close_table();
    if (unrounded_ > 0) {
      sink_.note(0, fmt::format("{} row(s) printed a bandwidth as 0.00: algbw is reported as size "
                                "/ time instead, and busbw as that algbw times the test's factor "
                                "where the rank count is known",
                                unrounded_));
    }
    sink_.finish(kLacks);
  }

 private:
  // A row of a table whose test is not known yet, held until the table ends.
  struct HeldRow {
    std::string text;
    std::uint64_t number = 0;
    bool unterminated = false;
  };

  void begin_run(std::uint64_t line) {
    close_table();
    // Device lines pasted above a table without its banner belong to the first run.
    auto earlier = sink_.in_run() ? decltype(run_.ranks){} : std::move(run_.ranks);
    sink_.begin_run(line);
    run_ = Run{};
    run_.ranks = std::move(earlier);
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
      close_table();
      table_.reset();
    } else if (auto layout = parse_layout(text)) {
      read_header(std::move(*layout), line);
    }
  }

  void read_header(Layout layout, std::uint64_t line) {
    close_table();
    if (!sink_.in_run()) begin_run(line);  // a table pasted without its banner
    if (!run_.has_table) start_table();
    run_.has_table = true;
    test_ = run_.test;
    if (test_.empty()) test_ = run_.program;
    if (test_.empty()) test_ = pending_program_;
    if (test_.empty()) test_ = file_program_;
    table_ = std::move(layout);
    if (test_.empty()) {
      // Nothing names the test: its rows are held until the table ends, then tell it.
      inferring_ = true;
      table_line_ = line;
      return;
    }
    test_name_ = Name(test_);
  }

  // What the row `text` shows of its test (words as the current layout places them).
  TableRowEvidence evidence_of(std::string_view text) const {
    const Layout& layout = *table_;
    const auto w = words(text);
    TableRowEvidence e;
    if (w.size() < layout.out_of_place_needed) return e;
    e.bytes = parse_number<std::uint64_t>(w[layout.size]).value_or(0);
    e.count = parse_number<std::uint64_t>(w[layout.count]).value_or(0);
    if (const auto dtype = parse_dtype(w[layout.type])) e.type_bytes = size_of(*dtype);
    if (layout.redop != kNone) e.redop = w[layout.redop];
    if (layout.root != kNone) e.root = parse_number<int>(w[layout.root]);
    e.algbw = parse_number<double>(w[layout.groups.front().algbw]);
    e.busbw = parse_number<double>(w[layout.groups.front().busbw]);
    if (layout.groups.size() == 2 && layout.groups[0].wrong != kNone &&
        layout.groups[1].wrong != kNone && layout.groups[1].wrong < w.size()) {
      const bool out_checked = parse_number<double>(w[layout.groups[0].wrong]).has_value();
      const bool in_checked = parse_number<double>(w[layout.groups[1].wrong]).has_value();
      if (out_checked) e.in_place_unchecked = !in_checked && w[layout.groups[1].wrong] == "N/A";
    }
    return e;
  }

  // The end of a table whose test nothing named: the rows say which it is, or which it might be.
  void close_table() {
    if (!inferring_) return;
    inferring_ = false;
    std::vector<HeldRow> held = std::move(held_);
    held_.clear();
    if (held.empty()) return;
    std::vector<TableRowEvidence> evidence;
    evidence.reserve(held.size());
    for (const auto& row : held) evidence.push_back(evidence_of(row.text));
    const InferredTest inferred =
        infer_nccl_tests_test(evidence, stated(facts_.nranks) ? facts_.nranks : 0);
    if (inferred.test.empty()) {
      sink_.problem(Diagnostic::Kind::kBadRecord, table_line_,
                    fmt::format("nccl-tests table of a run that does not name its test (no "
                                "\"# Collective test starting\" line, as before nccl-tests 2.17, "
                                "no <test>_perf command before it, no <test>_perf in the file "
                                "name), and its rows fit {} ({}); its {} row(s) are skipped: name "
                                "the file after the test, e.g. all_reduce_perf.log",
                                possible_tests_text(inferred), inferred.evidence, held.size()));
      table_.reset();
      return;
    }
    test_ = inferred.test;
    test_name_ = Name(test_);
    std::string ranks;
    const bool ranks_inferred = inferred.nranks > 0 && !stated(facts_.nranks);
    if (ranks_inferred) {
      facts_.nranks = inferred.nranks;
      sink_.context().nranks = inferred.nranks;
      ranks = fmt::format(" on {} rank(s)", inferred.nranks);
    } else if (inferred.nranks > 0) {
      ranks = fmt::format(" on {} rank(s), as its device lines say", inferred.nranks);
    }
    sink_.note(table_line_, fmt::format("nothing names this table's test: inferred from its rows "
                                        "as {}{} ({})",
                                        test_, ranks, inferred.evidence));
    sink_.add_label("inferred", ranks_inferred ? "test+ranks" : "test");
    for (const auto& row : held) read_row(row.text, Line{row.text, row.number, row.unterminated});
  }

  // The first table of a run: what its banner and device lines said goes into its context.
  void start_table() {
    RunContext& c = sink_.context();
    std::map<std::string, std::vector<int>> hosts;
    for (const auto& [rank, where] : run_.ranks) {
      if (!where.first.empty()) hosts[where.first].push_back(rank);
      if (!where.second.empty()) sink_.add_device(where.second, 1);
    }
    facts_.nranks = run_.ranks.empty() ? kNotStated : run_.ranks.rbegin()->first + 1;
    // Some device lines only (a paste's tail): the rank count, but not the hosts.
    const bool every_rank = static_cast<int>(run_.ranks.size()) == facts_.nranks;
    if (every_rank) {
      for (auto& [name, ranks] : hosts) c.hosts.push_back({name, std::move(ranks), "", {}});
    }
    facts_.nodes = hosts.empty() || !every_rank ? kNotStated : static_cast<int>(hosts.size());
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
    // The file's last line cut within the in-place half: the out-of-place half is whole.
    std::size_t groups = layout.groups.size();
    if (line.unterminated && groups == 2 && w.size() < layout.needed &&
        w.size() >= layout.out_of_place_needed) {
      groups = 1;
      sink_.problem(Diagnostic::Kind::kTruncated, line.number,
                    "last line ends within the in-place half (the run was probably "
                    "interrupted); its out-of-place half is read");
    } else if (!sink_.row_complete(line, w.size(), layout.needed)) {
      return;
    }
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
    for (std::size_t g = 0; g < groups; ++g) {
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
      unround_bandwidths(row, *time);
      if (group.wrong != kNone && group.wrong_counts) {
        if (const auto wrong = parse_number<double>(w[group.wrong]); wrong && *wrong >= 0) {
          row.wrong = static_cast<std::int64_t>(std::llround(*wrong));
          if (*row.wrong > 0) row.status = RowStatus::kWrong;
        }
      }
    }
  }

  // nccl-tests prints bandwidths with two decimals, so small sizes show 0.00. algbw is size /
  // time (GB/s of 1e9 bytes), so it is computed again from the two; busbw too (also when only
  // algbw was 0.00) where its factor is known: the test's, and the ranks where it depends on
  // them. Counted for the file's note.
  // Layouts before 2.1x (no redop column) printed other algbw for the gathers: left as printed.
  void unround_bandwidths(ReadRow& row, double time_us) {
    if (time_us <= 0 || row.bytes == 0 || table_->redop == kNone) return;
    const double algbw = static_cast<double>(row.bytes) / (time_us * 1e3);
    // Only a value the printed one rounds: a negative or inconsistent one stays, as printed.
    auto rounds_to = [](double value, double printed) {
      return printed >= 0 && std::abs(value - printed) <= 0.005 + 1e-9;
    };
    bool computed = false;
    if (row.algbw_gbps && *row.algbw_gbps == 0.0 && rounds_to(algbw, 0.0)) {
      row.algbw_gbps = algbw;
      computed = true;
    }
    const auto factor = nccl_tests_bus_factor(test_, stated(facts_.nranks) ? facts_.nranks : 0);
    if (row.busbw_gbps && (computed || *row.busbw_gbps == 0.0) && factor && *factor > 0 &&
        rounds_to(algbw * *factor, *row.busbw_gbps)) {
      row.busbw_gbps = algbw * *factor;
      computed = true;
    }
    if (computed) ++unrounded_;
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
  bool inferring_ = false;        ///< the current table's test is told by its rows at its end
  std::uint64_t table_line_ = 0;  ///< the header line of that table
  std::vector<HeldRow> held_;
  std::uint64_t unrounded_ = 0;  ///< rows whose 0.00 bandwidths were computed again
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
