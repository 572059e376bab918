#include "input/nccl_tests_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "collbench/text.h"
#include "input/import_text.h"
#include "input/nccl_tests_infer.h"

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

// The layouts nccl-tests has printed, by their header: rows pasted without theirs are read as
// the one their words fit. "#wrong" stands for old versions' "error" column too (told by its
// values: counts, or error values such as 1e-06).
struct KnownLayout {
  std::string_view header;
  std::string_view name;  ///< for messages
};
constexpr KnownLayout kKnownLayouts[] = {
    {"size count type redop root time algbw busbw #wrong time algbw busbw #wrong",
     "13 columns: size count type redop root, then time algbw busbw #wrong out-of-place and "
     "in-place"},
    {"size count type redop time algbw busbw #wrong time algbw busbw #wrong",
     "12 columns: redop and no root"},
    {"size count type root time algbw busbw #wrong time algbw busbw #wrong",
     "12 columns: root and no redop"},
    {"size count type time algbw busbw #wrong time algbw busbw #wrong",
     "11 columns: neither redop nor root"},
};
constexpr std::size_t kKnownLayoutCount = std::size(kKnownLayouts);

// What the #wrong column of a row holds.
enum class WrongColumn { kNotChecked, kCount, kError };

// Whether the words `w` of a row fit `layout` word for word: a whole number of bytes and
// elements, a type nccl-tests names, an operator (or "none"), a root rank (or -1), times and
// bandwidths, and a count, an error value or "N/A" where #wrong goes. `wrong` is what the
// #wrong columns hold (a count wins over "N/A"; counts and error values together fit nothing).
bool fits(const std::vector<std::string_view>& w, const Layout& layout, WrongColumn& wrong) {
  if (w.size() != layout.needed) return false;
  if (!parse_number<std::uint64_t>(w[layout.size]) ||
      !parse_number<std::uint64_t>(w[layout.count]) || !parse_dtype(w[layout.type])) {
    return false;
  }
  if (layout.redop != kNone && w[layout.redop] != "none" && !parse_op(w[layout.redop]))
    return false;
  if (layout.root != kNone) {
    const auto root = parse_number<int>(w[layout.root]);
    if (!root || *root < -1) return false;
  }
  wrong = WrongColumn::kNotChecked;
  for (const auto& g : layout.groups) {
    for (const std::size_t c : {g.time, g.algbw, g.busbw}) {
      if (!parse_number<double>(w[c])) return false;
    }
    const std::string_view value = w[g.wrong];
    WrongColumn kind = WrongColumn::kNotChecked;
    if (parse_number<std::int64_t>(value)) {
      kind = WrongColumn::kCount;
    } else if (parse_number<double>(value)) {
      kind = WrongColumn::kError;
    } else if (value != "N/A") {
      return false;
    }
    if (kind == WrongColumn::kNotChecked) continue;
    if (wrong != WrongColumn::kNotChecked && wrong != kind) return false;
    wrong = kind;
  }
  return true;
}

// The known layouts a row's words fit, one bit per kKnownLayouts entry; `wrong` per layout.
unsigned layouts_fitting(std::string_view text, WrongColumn (&wrong)[kKnownLayoutCount]) {
  static const auto layouts = [] {
    std::vector<Layout> out;
    for (const auto& known : kKnownLayouts) out.push_back(*parse_layout(known.header));
    return out;
  }();
  const auto w = words(text);
  unsigned bits = 0;
  for (std::size_t i = 0; i < kKnownLayoutCount; ++i) {
    if (fits(w, layouts[i], wrong[i])) bits |= 1u << i;
  }
  return bits;
}

// Whether a line may be a row of a table whose header is not there: a size, a count, a type and
// at least as many words as the shortest layout has (any number when the file's last line is cut,
// so that the cut is reported).
bool looks_like_row(std::string_view text, bool cut) {
  const auto w = words(text);
  return w.size() >= (cut ? 3 : 11) && parse_number<std::uint64_t>(w[0]) &&
         parse_number<std::uint64_t>(w[1]) && parse_dtype(w[2]);
}

// "====== 2-node ======", "==========": a line a script or a person puts between runs.
bool is_separator(std::string_view text) {
  return text.size() >= 3 && text.starts_with("===") && text.ends_with("===");
}

// The words of a separator: "2-node" of "====== 2-node ======".
std::string_view separator_title(std::string_view text) {
  const auto first = text.find_first_not_of('=');
  if (first == std::string_view::npos) return {};
  return trim(text.substr(first, text.find_last_not_of('=') + 1 - first));
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
      close_headerless();
      read_comment(text, *comment, line.number);
    } else if (is_separator(text)) {
      read_separator(text);
      return;  // it belongs to the next run, whose id it enters when that run begins
    } else if (table_ && !text.empty() && text.front() >= '0' && text.front() <= '9') {
      if (inferring_) {
        held_.push_back({std::string(text), line.number, line.unterminated});
      } else {
        read_row(text, line);
      }
    } else if (!table_ && looks_like_row(text, line.unterminated)) {
      headerless_.push_back({std::string(text), line.number, line.unterminated});
    } else if (auto layout = parse_layout(text)) {
      read_header(std::move(*layout), line.number);
    } else if (const auto program = nccl_tests_program_test(text); !program.empty()) {
      pending_program_ = std::string(program);  // a command line: the next run's test
    }
    if (sink_.in_run()) sink_.hash_line(text);
  }

  void finish() override {
    close_headerless();
    close_table();
    if (unrounded_ > 0) {
      sink_.note(0,
                 fmt::format("{} row(s) printed a bandwidth below 5.00 (two decimals: 0.00, or "
                             "more than 0.1% off): algbw is reported as size / time instead, and "
                             "busbw as that algbw times the test's factor where the rank count "
                             "is known",
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
    if (separator_) {
      // The separator above the run: its text enters the run's id, its words label the rows.
      sink_.hash_line(separator_->text);
      if (!separator_->title.empty()) sink_.add_label("section", separator_->title);
      separator_.reset();
    }
  }

  // A separator line: the run before it ends there, and the next one starts after it.
  void read_separator(std::string_view text) {
    close_headerless();
    close_table();
    sink_.end_run();
    run_ = Run{};
    table_.reset();
    separator_ = Separator{std::string(text), std::string(separator_title(text))};
    // "=== all_reduce_perf 8 GPU ===" names the next run's test, as a command line would.
    if (const auto program = nccl_tests_program_test(text); !program.empty()) {
      pending_program_ = std::string(program);
    }
  }

  // The end of rows that came without their header: their layout is the one known layout
  // their words fit, if exactly one does; then they are read as a table under that header.
  void close_headerless() {
    if (headerless_.empty()) return;
    std::vector<HeldRow> rows = std::move(headerless_);
    headerless_.clear();
    WrongColumn unused[kKnownLayoutCount] = {};
    if (rows.back().unterminated && layouts_fitting(rows.back().text, unused) == 0) {
      sink_.problem(Diagnostic::Kind::kTruncated, rows.back().number,
                    "last line ends mid-row (the run was probably interrupted); skipped");
      rows.pop_back();
      if (rows.empty()) return;
    }
    const std::uint64_t first = rows.front().number;
    unsigned common = (1u << kKnownLayoutCount) - 1;
    WrongColumn wrong[kKnownLayoutCount] = {};
    std::string why;
    for (const auto& row : rows) {
      WrongColumn row_wrong[kKnownLayoutCount] = {};
      const unsigned bits = layouts_fitting(row.text, row_wrong);
      if (bits == 0) {
        why = fmt::format("line {} fits none of the layouts nccl-tests has printed", row.number);
        break;
      }
      if ((common & bits) == 0) {
        why = fmt::format("line {} fits other columns ({}) than the rows above it ({})", row.number,
                          layout_names(bits), layout_names(common));
        break;
      }
      common &= bits;
      for (std::size_t i = 0; i < kKnownLayoutCount; ++i) {
        if ((bits & (1u << i)) == 0 || row_wrong[i] == WrongColumn::kNotChecked) continue;
        if (wrong[i] != WrongColumn::kNotChecked && wrong[i] != row_wrong[i]) {
          common &= ~(1u << i);  // counts in some rows, error values in others
        }
        wrong[i] = row_wrong[i];
      }
      if (common == 0) {
        why = fmt::format(
            "line {} has a #wrong count where the rows above have an error value, "
            "or the other way round",
            row.number);
        break;
      }
    }
    if (why.empty() && (common & (common - 1)) != 0) {
      why = fmt::format("they fit more than one layout ({})", layout_names(common));
    }
    if (!why.empty()) {
      sink_.problem(Diagnostic::Kind::kBadRecord, first,
                    fmt::format("nccl-tests rows without their header (the table's column names): "
                                "{}, so their columns cannot be told; its {} row(s) are skipped: "
                                "keep the header line (#  size  count  type ...) above them",
                                why, rows.size()));
      return;
    }
    const auto index = static_cast<std::size_t>(std::countr_zero(common));
    Layout layout = *parse_layout(kKnownLayouts[index].header);
    for (auto& g : layout.groups) g.wrong_counts = wrong[index] != WrongColumn::kError;
    // A table after another one's end, without a banner between them, is another run.
    if (sink_.in_run() && run_.has_table) begin_run(first);
    sink_.note(first, fmt::format("no header above these rows: their columns are read as the "
                                  "only layout of nccl-tests their words fit ({}{})",
                                  kKnownLayouts[index].name,
                                  wrong[index] == WrongColumn::kError ? "; \"error\" values, not "
                                                                        "#wrong counts"
                                                                      : ""));
    read_header(std::move(layout), first);
    if (inferring_) {
      layout_inferred_ = true;  // the label says so with the test
    } else {
      sink_.add_label("inferred", "columns");
    }
    for (auto& row : rows) {
      if (inferring_) {
        held_.push_back(std::move(row));
      } else {
        read_row(row.text, Line{row.text, row.number, row.unterminated});
      }
    }
    close_table();
    table_.reset();
  }

  // "13 columns: ... or 12 columns: ..." for the layouts in `bits`.
  static std::string layout_names(unsigned bits) {
    std::vector<std::string> names;
    for (std::size_t i = 0; i < kKnownLayoutCount; ++i) {
      if (bits & (1u << i)) names.emplace_back(kKnownLayouts[i].name);
    }
    return join(names, " or ");
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
    close_headerless();
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
    settle_ranks(0);
  }

  // The rank count of the table's rows: its run's device lines', else the one its rows tell
  // (`told`, 0 if none), else --ranks (ImportSink::settle_ranks).
  void settle_ranks(int told) {
    const int ranks = sink_.settle_ranks(stated(facts_.nranks) ? facts_.nranks : told);
    if (ranks > 0 && !stated(facts_.nranks)) {
      facts_.nranks = ranks;
      sink_.context().nranks = ranks;
    }
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
    const bool layout_inferred = std::exchange(layout_inferred_, false);
    std::vector<HeldRow> held = std::move(held_);
    held_.clear();
    if (held.empty()) return;
    std::vector<TableRowEvidence> evidence;
    evidence.reserve(held.size());
    for (const auto& row : held) evidence.push_back(evidence_of(row.text));
    InferredTest inferred =
        infer_nccl_tests_test(evidence, stated(facts_.nranks) ? facts_.nranks : 0);
    // Rows that fit several tests on different rank counts (one rank's reduce_scatter is an
    // all_reduce) may fit one on the ranks --ranks gives; the count then is the user's, not told.
    std::string given;
    if (inferred.test.empty() && !stated(facts_.nranks) && sink_.given_ranks() > 0) {
      InferredTest with_given = infer_nccl_tests_test(evidence, sink_.given_ranks());
      if (!with_given.test.empty()) {
        inferred = std::move(with_given);
        inferred.nranks = 0;
        given = fmt::format(", on the {} rank(s) --ranks gives", sink_.given_ranks());
      }
    }
    if (inferred.test.empty()) {
      sink_.problem(Diagnostic::Kind::kBadRecord, table_line_,
                    fmt::format("nccl-tests table of a run that does not name its test (no "
                                "\"# Collective test starting\" line, as before nccl-tests 2.17, "
                                "no <test>_perf command before it, no <test>_perf in the file "
                                "name), and its rows fit {} ({}); its {} row(s) are skipped: name "
                                "the file after the test, e.g. all_reduce_perf.log{}",
                                possible_tests_text(inferred), inferred.evidence, held.size(),
                                stated(facts_.nranks) || sink_.given_ranks() > 0
                                    ? ""
                                    : ", or give the rank count with --ranks N if it tells "
                                      "these tests apart"));
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
                                        "as {}{} ({}{})",
                                        test_, ranks, inferred.evidence, given));
    sink_.add_label("inferred", std::string(layout_inferred ? "columns+" : "") +
                                    (ranks_inferred ? "test+ranks" : "test"));
    settle_ranks(inferred.nranks);
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
      for (auto& [name, ranks] : hosts) c.hosts.push_back({name, std::move(ranks), "", {}, ""});
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

  // nccl-tests prints bandwidths with two decimals, so small sizes show 0.00, and a printed
  // value below 5.00 can be more than 0.1% off (0.01 for 0.0072 GB/s: its -J JSON of the same
  // run says 0.007215, and a comparison of the two found a 28% "regression"). algbw is size /
  // time (GB/s of 1e9 bytes), and the time is printed with more digits, so it is computed again
  // from the two; busbw too (also when only algbw was rounded) where its factor is known: the
  // test's, and the ranks where it depends on them. Counted for the file's note.
  // Layouts before 2.1x (no redop column) printed other algbw for the gathers: left as printed.
  static constexpr double kRoundedBelow = 5.0;
  void unround_bandwidths(ReadRow& row, double time_us) {
    if (time_us <= 0 || row.bytes == 0 || table_->redop == kNone) return;
    const double algbw = static_cast<double>(row.bytes) / (time_us * 1e3);
    // Only a value the printed one rounds: a negative or inconsistent one stays, as printed.
    auto rounds_to = [](double value, double printed) {
      return printed >= 0 && printed < kRoundedBelow && std::abs(value - printed) <= 0.005 + 1e-9;
    };
    bool computed = false;
    if (row.algbw_gbps && rounds_to(algbw, *row.algbw_gbps)) {
      computed = *row.algbw_gbps != algbw;
      row.algbw_gbps = algbw;
    }
    const auto factor = nccl_tests_bus_factor(test_, stated(facts_.nranks) ? facts_.nranks : 0);
    if (row.busbw_gbps && factor && *factor > 0 && rounds_to(algbw * *factor, *row.busbw_gbps)) {
      computed = computed || *row.busbw_gbps != algbw * *factor;
      row.busbw_gbps = algbw * *factor;
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
  std::vector<HeldRow> headerless_;  ///< rows before any header, until their block ends
  bool layout_inferred_ = false;     ///< the current table's columns were told by its rows
  // A separator line waiting for the run after it.
  struct Separator {
    std::string text, title;
  };
  std::optional<Separator> separator_;
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

bool is_nccl_tests_headerless_row(std::string_view line) {
  WrongColumn wrong[kKnownLayoutCount] = {};
  const unsigned bits = layouts_fitting(line, wrong);
  return bits != 0 && (bits & (bits - 1)) == 0;
}

bool is_nccl_tests_footer(std::string_view line) {
  const auto comment = comment_of(line);
  return comment && (comment->starts_with("Out of bounds values") ||
                     comment->starts_with("Avg bus bandwidth"));
}

std::unique_ptr<Importer> make_nccl_tests_text_importer(ImportSink sink,
                                                        std::string_view file_name) {
  return std::make_unique<NcclTestsTextImporter>(std::move(sink), file_name);
}

}  // namespace collbench::report::detail
