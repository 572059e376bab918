#include "input/import_sink.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "input/context_reader.h"
#include "input/dedup.h"
#include "input/row_check.h"
#include "input/row_decoder.h"

namespace collbench::report::detail {

namespace {

constexpr std::uint64_t kFnvOffset = 1469598103934665603ull;
constexpr std::uint64_t kFnvPrime = 1099511628211ull;

std::uint64_t fnv1a(std::uint64_t hash, std::string_view text) {
  for (const char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= kFnvPrime;
  }
  return hash;
}

std::string_view tool_of(InputFormat format) {
  return format == InputFormat::kOsuText ? "osu" : "nccl-tests";
}

}  // namespace

RowTimes headline_times(double reported_us) {
  constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();
  RowTimes times;
  times.reported = reported_us;
  times.slowest = kUnknown;
  times.mean = kUnknown;
  times.fastest = kUnknown;
  return times;
}

ImportSink::ImportSink(ResultSet& set, FileDiagnostics& file, InputFormat format,
                       const ImportOptions& imports)
    : set_(set),
      file_(file),
      format_(format),
      tool_(tool_of(format)),
      base_labels_(std::vector<Label>{{Name("source"), Name(tool_), false}}),
      labels_(base_labels_),
      backend_(format == InputFormat::kOsuText ? "mpi" : "nccl"),
      given_ranks_(std::max(imports.ranks, 0)) {}

void ImportSink::begin_run(std::uint64_t line) {
  end_run();
  in_run_ = true;
  run_noted_ = false;
  run_line_ = line;
  hash_ = fnv1a(kFnvOffset, tool_);
  first_row_ = set_.rows.size();
  context_ = RunContext{};
  devices_.clear();
  labels_ = base_labels_;
  run_ranks_given_ = false;
  run_ranks_disagree_ = false;
}

void ImportSink::hash_line(std::string_view text) {
  hash_ = fnv1a(hash_, text);
  hash_ = fnv1a(hash_, "\n");
}

void ImportSink::add_device(std::string_view model, int ranks) {
  const auto it = std::find_if(devices_.begin(), devices_.end(),
                               [model](const auto& device) { return device.first == model; });
  if (it == devices_.end()) {
    devices_.emplace_back(std::string(model), ranks);
  } else {
    it->second += ranks;
  }
}

void ImportSink::set_backend(std::string_view backend) { backend_ = Name(backend); }

void ImportSink::add_label(std::string_view key, std::string_view value) {
  if (labels_.find(key)) return;  // keys are distinct: the first one stays
  std::vector<Label> labels = labels_.items();
  labels.push_back({Name(key), Name(value), false});
  labels_ = Labels(std::move(labels));
}

int ImportSink::settle_ranks(int from_output) {
  if (from_output > 0) {
    if (given_ranks_ > 0 && given_ranks_ != from_output && !run_ranks_disagree_) {
      run_ranks_disagree_ = true;
      note(run_line_, fmt::format("--ranks {} differs from the {} rank(s) of this run, which its "
                                  "output states or its rows tell; {} kept",
                                  given_ranks_, from_output, from_output));
    }
    return from_output;
  }
  if (given_ranks_ == 0) return 0;
  if (!run_ranks_given_) {
    run_ranks_given_ = true;
    ++runs_given_ranks_;
    add_label("given", "ranks");
  }
  return given_ranks_;
}

ReadRow& ImportSink::add_row(std::uint64_t line, const RunFacts& facts) {
  ReadRow& row = set_.rows.emplace_back();
  row.backend = backend_;
  row.labels = labels_;
  row.mode = facts.mode;
  row.buffers = facts.buffers;
  row.graph_launches = facts.graph_launches;
  row.nranks = facts.nranks;
  row.nodes = facts.nodes;
  row.iterations = facts.iterations;
  row.warmup = facts.warmup;
  row.file = file_.index();
  row.line = static_cast<std::uint32_t>(line);
  file_.count_record();
  return row;
}

bool ImportSink::row_complete(const Line& line, std::size_t values, std::size_t columns) {
  if (values >= columns) return true;
  if (line.unterminated) {
    problem(Diagnostic::Kind::kTruncated, line.number,
            "last line ends mid-row (the run was probably interrupted); skipped");
  } else {
    problem(Diagnostic::Kind::kBadRecord, line.number,
            fmt::format("a row of {} value(s) in a table of {} columns; skipped", values, columns));
  }
  return false;
}

void ImportSink::end_run() {
  if (!in_run_) return;
  in_run_ = false;
  // The rows are held to collbench's own rule (a known test, ranks, no negative time or
  // bandwidth); those that fail it are bad records, like collbench's.
  std::size_t kept = first_row_;
  for (std::size_t i = first_row_; i < set_.rows.size(); ++i) {
    const std::string problem = row_value_problem(set_.rows[i], RowOrigin::kImported);
    if (!problem.empty()) {
      file_.add(Diagnostic::Kind::kBadRecord, set_.rows[i].line,
                fmt::format("result row with a value out of range: {}; skipped", problem));
      continue;
    }
    if (kept != i) set_.rows[kept] = std::move(set_.rows[i]);
    ++kept;
  }
  const bool rejected = kept != set_.rows.size();
  set_.rows.resize(kept);
  const std::size_t end = set_.rows.size();
  if (first_row_ == end) {
    if (rejected) return;  // every row was reported
    if (!run_noted_) {
      note(run_line_, "a run without result rows (it ended before printing any); nothing read");
    }
    return;
  }
  ++runs_;
  rows_ += end - first_row_;
  const Name run_id(fmt::format("{}-{:016x}", tool_, hash_));
  // A measurement printed again within one run is the next cycle of nccl-tests' -N.
  std::unordered_map<std::uint64_t, int> seen;
  std::vector<Name> ids{run_id};
  for (std::size_t i = first_row_; i < end; ++i) {
    ReadRow& row = set_.rows[i];
    row.run_id = run_id;
    const int occurrence = ++seen[measurement_hash(row)];
    if (occurrence > 1) row.cycle = occurrence - 1;
    if (row.status != RowStatus::kOk) {
      file_.add(Diagnostic::Kind::kFailedStatus, row.line, failed_status_message(row));
    }
  }
  context_.backend.name = backend_.str();
  for (const Name id : ids) {
    if (const auto existing = set_.contexts.find(id); existing != set_.contexts.end()) {
      file_.add(Diagnostic::Kind::kDuplicate, run_line_,
                duplicate_context_message(set_, id, existing->second));
      continue;
    }
    ReadContext context{context_, devices_, file_.index(), static_cast<std::uint32_t>(run_line_),
                        format_};
    context.context.run_id = id.str();
    set_.contexts.emplace(id, std::move(context));
  }
}

void ImportSink::finish(std::string_view lacks) {
  end_run();
  if (runs_given_ranks_ > 0) {
    note(0, fmt::format("{} run(s) state no rank count and their rows tell none: --ranks {} is "
                        "used for them (label given=ranks)",
                        runs_given_ranks_, given_ranks_));
  }
  note(0, fmt::format("read as {}: {} run(s), {} result row(s); {}", describe(format_), runs_,
                      rows_, lacks));
}

void ImportSink::note(std::uint64_t line, std::string message) {
  file_.add(Diagnostic::Kind::kImported, line, std::move(message));
}

void ImportSink::note_run(std::string message) {
  run_noted_ = true;
  note(run_line_, std::move(message));
}

void ImportSink::problem(Diagnostic::Kind kind, std::uint64_t line, std::string message) {
  file_.add(kind, line, std::move(message));
}

}  // namespace collbench::report::detail
