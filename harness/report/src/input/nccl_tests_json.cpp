#include "input/nccl_tests_json.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "collbench/text.h"
#include "input/import_text.h"

namespace collbench::report::detail {

namespace {

namespace dom = simdjson::dom;

constexpr std::string_view kLacks =
    "not in this output, so shown as unknown: per-iteration times (later versions' per-iteration "
    "members are not read), the slowest rank and host, and the network used";

// The document cut after its last complete value and closed: what a run that died while
// writing leaves is read as far as it goes. nullopt when not even one value is complete.
std::optional<std::string> close_truncated(std::string_view text) {
  std::vector<char> open;
  std::vector<char> open_at_cut;
  std::size_t cut = 0;
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      open.push_back(c == '{' ? '}' : ']');
    } else if (c == '}' || c == ']') {
      if (open.empty() || open.back() != c) return std::nullopt;
      open.pop_back();
      if (open.empty()) return std::nullopt;  // complete, so not cut short
      cut = i + 1;
      open_at_cut = open;
    }
  }
  if (cut == 0) return std::nullopt;
  std::string closed(text.substr(0, cut));
  for (auto it = open_at_cut.rbegin(); it != open_at_cut.rend(); ++it) closed += *it;
  return closed;
}

std::optional<std::int64_t> integer(dom::element e) {
  std::int64_t i = 0;
  if (!e.get_int64().get(i)) return i;
  double d = 0;
  if (!e.get_double().get(d) && d == std::floor(d) && std::abs(d) < 9e15) {
    return static_cast<std::int64_t>(d);
  }
  return std::nullopt;
}

// A number; the writer prints NaN as the string "nan", which is no value.
std::optional<double> number(dom::element e) {
  double d = 0;
  if (e.get_double().get(d) || !std::isfinite(d)) return std::nullopt;
  return d;
}

std::string_view text_of(dom::element e) {
  std::string_view s;
  return e.get_string().get(s) ? std::string_view() : s;
}

std::optional<dom::element> member(dom::element object, std::string_view key) {
  dom::element e;
  if (object.at_key(key).get(e)) return std::nullopt;
  return e;
}

std::string_view text_member(dom::element object, std::string_view key) {
  const auto e = member(object, key);
  return e ? text_of(*e) : std::string_view();
}

// A member holding a count: -1 when it is missing or is not one.
std::int64_t int64_member(dom::element object, std::string_view key) {
  const auto e = member(object, key);
  const auto i = e ? integer(*e) : std::nullopt;
  return i && *i >= 0 ? *i : -1;
}

int int_member(dom::element object, std::string_view key, int fallback) {
  const auto e = member(object, key);
  const auto i = e ? integer(*e) : std::nullopt;
  return i && *i >= 0 && *i <= std::numeric_limits<int>::max() ? static_cast<int>(*i) : fallback;
}

// -a N / --average N / --average=N in the command line; nccl-tests' default is 1, the mean.
RankAggregate aggregate_of(const std::vector<std::string_view>& args) {
  std::string_view value = "1";
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string_view a = args[i];
    if ((a == "-a" || a == "--average") && i + 1 < args.size()) {
      value = args[i + 1];
    } else if (a.starts_with("--average=")) {
      value = a.substr(10);
    } else if (a.starts_with("-a") && a.size() > 2 && !a.starts_with("--")) {
      value = a.substr(2);
    }
  }
  const auto n = parse_number<int>(value);
  return n && *n >= 0 && *n <= 3 ? static_cast<RankAggregate>(*n) : RankAggregate::kMean;
}

class NcclTestsJsonImporter final : public Importer {
 public:
  NcclTestsJsonImporter(ImportSink sink, std::string_view file_name)
      : sink_(std::move(sink)), file_program_(nccl_tests_program_test(file_name)) {}

  void read_line(const Line& line) override {
    if (first_line_ == 0) first_line_ = line.number;
    last_line_ = line.number;
    text_.append(line.text);
    text_ += '\n';
  }

  void finish() override {
    if (first_line_ > 0) read_document();
    sink_.finish(kLacks);
  }

 private:
  void read_document() {
    sink_.begin_run(first_line_);
    sink_.hash_line(text_);
    dom::element doc;
    auto error = parser_.parse(text_).get(doc);
    if (error) {
      const auto closed = close_truncated(text_);
      if (!closed || parser_.parse(*closed).get(doc)) {
        sink_.problem(Diagnostic::Kind::kInvalidJson, first_line_,
                      fmt::format("not a readable nccl-tests JSON document ({}); skipped",
                                  simdjson::error_message(error)));
        return;
      }
      sink_.problem(Diagnostic::Kind::kTruncated, last_line_,
                    "the document ends early (the run was probably interrupted): read up to its "
                    "last complete value");
    }
    if (doc.type() != dom::element_type::OBJECT) {
      sink_.problem(Diagnostic::Kind::kBadRecord, first_line_,
                    "not an nccl-tests JSON document (not an object); skipped");
      return;
    }
    read_run(doc);
  }

  void read_run(dom::element doc) {
    // Version 3 (nccl-tests 2.19) adds per-result "actual_iterations" and "experiment_name" and
    // the per-iteration settings to "config", and keeps every member versions 1 and 2 had.
    if (const int version = int_member(doc, "version", 0); version > 3) {
      sink_.note(first_line_, fmt::format("nccl-tests JSON version {} is newer than the ones this "
                                          "reader knows (1 to 3); read as version 3",
                                          version));
    }
    std::vector<std::string_view> args;
    if (const auto list = member(doc, "args")) {
      dom::array array;
      if (!list->get_array().get(array)) {
        for (const dom::element arg : array) args.push_back(text_of(arg));
      }
    }
    std::string test(args.empty() ? std::string_view() : nccl_tests_program_test(args.front()));
    if (test.empty()) test = file_program_;
    if (test.empty()) {
      sink_.problem(Diagnostic::Kind::kBadRecord, first_line_,
                    "nccl-tests JSON document whose \"args\" do not name a <test>_perf program; "
                    "skipped: name the file after the test, e.g. all_reduce_perf.json");
      return;
    }
    test_ = Name(test);
    aggregate_ = aggregate_of(args);
    RunContext& c = sink_.context();
    for (const auto a : args) c.command_line.emplace_back(a);
    c.start_time = std::string(text_member(doc, "start_time"));
    if (const auto code = member(doc, "nccl_version")) {
      if (const auto v = integer(*code); v && *v > 0) {
        c.libraries["nccl"] = nccl_version_text(static_cast<long>(*v));
        c.backend.library = "NCCL " + c.libraries["nccl"];
      }
    }
    if (const auto config = member(doc, "config")) read_config(*config);
    const auto results = member(doc, "results");
    dom::array array;
    if (!results || results->get_array().get(array)) {
      sink_.problem(Diagnostic::Kind::kBadRecord, first_line_,
                    "nccl-tests JSON document without a \"results\" list; no rows read");
      return;
    }
    std::size_t index = 0;
    for (const dom::element result : array) read_result(result, index++);
  }

  // "config": the run's options and, per process, its first device.
  void read_config(dom::element config) {
    facts_.warmup = int_member(config, "warmup_iters", kNotStated);
    facts_.iterations = int_member(config, "iterations", kNotStated);
    facts_.set_mode(int_member(config, "graph", 0),
                    text_member(config, "blocking_collectives") == "true");
    // Each process runs nthreads × ngpus ranks; the document lists one device per process.
    const int per_process =
        int_member(config, "nthreads", 1) * std::max(1, int_member(config, "ngpus", 1));
    const auto devices = member(config, "devices");
    dom::array array;
    if (!devices || devices->get_array().get(array) || array.size() == 0) return;
    std::map<std::string, std::vector<int>> hosts;
    int process = 0;
    for (const dom::element device : array) {
      const std::string host(text_member(device, "hostname"));
      const int rank = int_member(device, "rank", process * per_process);
      for (int r = 0; r < per_process && !host.empty(); ++r) hosts[host].push_back(rank + r);
      const std::string_view model = trim(text_member(device, "device_info"));
      if (!model.empty()) sink_.add_device(model, per_process);
      ++process;
    }
    RunContext& c = sink_.context();
    for (auto& [name, ranks] : hosts) c.hosts.push_back({name, std::move(ranks), "", {}, ""});
    facts_.nranks = process * per_process;
    facts_.nodes = hosts.empty() ? kNotStated : static_cast<int>(hosts.size());
    c.nranks = facts_.nranks;
    c.nodes = stated(facts_.nodes) ? facts_.nodes : 0;
  }

  void read_result(dom::element result, std::size_t index) {
    const std::int64_t bytes = int64_member(result, "size");
    const std::int64_t elements = int64_member(result, "count");
    const auto dtype = parse_dtype(text_member(result, "type"));
    const std::string_view redop = text_member(result, "redop");
    const auto root = parse_number<int>(trim(text_member(result, "root")));
    std::optional<ReduceOp> op;
    std::string why;
    if (bytes < 0 || elements < 0) why = "size or count is missing";
    if (why.empty() && !dtype) why = "its type is not one collbench knows";
    if (why.empty() && is_reduction_test(test_.view())) {
      op = parse_op(redop);
      if (!op) why = fmt::format("op \"{}\" has no collbench equivalent", redop);
    }
    if (!why.empty()) {
      sink_.problem(Diagnostic::Kind::kBadRecord, first_line_,
                    fmt::format("results[{}]: {}; skipped", index, why));
      return;
    }
    const std::pair<std::string_view, Placement> placements[] = {
        {"out_of_place", Placement::kOutOfPlace}, {"in_place", Placement::kInPlace}};
    for (const auto& [key, placement] : placements) {
      const auto body = member(result, key);
      if (!body || body->type() != dom::element_type::OBJECT) continue;  // null: not measured
      auto time = member(*body, "time");
      if (!time) time = member(*body, "cpu_time");
      const auto us = time ? number(*time) : std::nullopt;
      if (!us || *us < 0) {
        sink_.problem(Diagnostic::Kind::kBadRecord, first_line_,
                      fmt::format("results[{}].{}: no time; skipped", index, key));
        continue;
      }
      ReadRow& row = sink_.add_row(first_line_, facts_);
      row.test = test_;
      row.bytes = static_cast<std::uint64_t>(bytes);
      row.count = static_cast<std::uint64_t>(elements);
      row.dtype = *dtype;
      row.op = op;
      if (root && *root >= 0) row.root = *root;
      row.placement = placement;
      RowTimes& t = row.time_us.emplace(headline_times(*us));
      // The aggregate -a chose is stated by the command line; the others are not recorded.
      if (aggregate_ == RankAggregate::kMean) t.mean = *us;
      if (aggregate_ == RankAggregate::kFastest) t.fastest = *us;
      if (aggregate_ == RankAggregate::kSlowest) t.slowest = *us;
      if (const auto e = member(*body, "alg_bw")) row.algbw_gbps = number(*e).value_or(kUnknown);
      if (const auto e = member(*body, "bus_bw")) row.busbw_gbps = number(*e).value_or(kUnknown);
      if (const auto e = member(*body, "nwrong")) {
        if (const auto wrong = number(*e); wrong && *wrong >= 0) {
          row.wrong = static_cast<std::int64_t>(std::llround(*wrong));
          if (*row.wrong > 0) row.status = RowStatus::kWrong;
        }
      }
    }
  }

  static constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();

  ImportSink sink_;
  std::string file_program_;
  std::string text_;
  std::uint64_t first_line_ = 0, last_line_ = 0;
  dom::parser parser_;
  Name test_;
  RankAggregate aggregate_ = RankAggregate::kMean;
  RunFacts facts_;
};

}  // namespace

bool is_nccl_tests_json(std::string_view head) {
  head = trim(head);
  if (!head.starts_with('{')) return false;
  head.remove_prefix(1);
  head = trim(head);
  return head.starts_with("\"version\"") && head.find("\"start_time\"") != std::string_view::npos;
}

std::unique_ptr<Importer> make_nccl_tests_json_importer(ImportSink sink,
                                                        std::string_view file_name) {
  return std::make_unique<NcclTestsJsonImporter>(std::move(sink), file_name);
}

}  // namespace collbench::report::detail
