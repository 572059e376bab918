// Reading collbench results (JSON Lines, results/schema/collbench-results.schema.json) for the
// offline report: every *.jsonl under the given directories plus the given files, with every
// problem in the input reported by file and line instead of stopping the read.
#pragma once

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace collbench::report {

/// A problem found in the input. Lines count from 1; 0 means the whole file.
struct Diagnostic {
  enum class Kind {
    kUnreadable,    ///< the file cannot be opened or read
    kNotCollbench,  ///< the file (or line) is not a collbench record
    kTruncated,     ///< the last line of a file ends mid-record (an interrupted run)
    kInvalidJson,   ///< a line that is not JSON
    kNewerSchema,   ///< written by a newer collbench; its fields may mean something else
    kBadRecord,     ///< a collbench record with a missing or mistyped field
    kDuplicate,     ///< the same measurement (run_id and key) seen before
    kFailedStatus,  ///< status "wrong" or "unsupported": kept in results.csv, not plotted
    kNoContext,     ///< result rows whose run has no context line anywhere in the input
  };
  Kind kind;
  std::string file;
  std::uint64_t line = 0;
  std::string message;
};

/// Short name of a diagnostic kind ("truncated", "duplicate", ...).
std::string_view name(Diagnostic::Kind kind);

/// A string table: rows refer to their repeated strings by small ids.
class StringPool {
 public:
  StringPool();
  /// The id of `text`, adding it when new. Id 0 is the empty string.
  std::uint32_t intern(std::string_view text);
  const std::string& str(std::uint32_t id) const { return strings_[id]; }
  std::size_t size() const { return strings_.size(); }

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::vector<std::string> strings_;
  std::unordered_map<std::string, std::uint32_t, Hash, std::equal_to<>> ids_;
};

/// A set of labels (name -> value, sorted by name) as collbench-sweep's collect step adds them.
/// Numbers are kept in their JSON spelling ("16", "0.5").
using LabelSet = std::vector<std::pair<std::uint32_t, std::uint32_t>>;  // string ids

inline constexpr std::uint32_t kNoId = std::numeric_limits<std::uint32_t>::max();

/// Per-iteration time summary in microseconds (absent when n == 0).
struct IterationTimes {
  std::uint32_t n = 0;
  double min = 0, p50 = 0, p99 = 0, max = 0, mean = 0, cv = 0;
};

/// Row status as in the schema.
enum class Status : std::uint8_t { kOk, kWrong, kUnsupported };
std::string_view name(Status status);

/// One result line, compact: strings are ids into ResultSet::strings.
struct Row {
  std::uint64_t bytes = 0;
  std::uint64_t count = 0;
  double time_reported = 0, time_slowest = 0, time_mean = 0, time_fastest = 0;
  IterationTimes per_iteration;
  double algbw = 0, busbw = 0;
  std::int64_t wrong = -1;  ///< -1: not checked
  std::uint32_t run_id = 0, test = 0, backend = 0, dtype = 0, op = 0, placement = 0, mode = 0;
  std::uint32_t slowest_host = 0, note = 0;
  std::uint32_t labels = 0;  ///< index into ResultSet::label_sets (0 = no labels)
  std::uint32_t file = 0;    ///< index into ResultSet::files
  std::uint32_t line = 0;
  std::int32_t nranks = 0, nodes = 0, root = -1, window = -1, iterations = 0, warmup = 0;
  std::int32_t graph_launches = 0, slowest_rank = -1, pair_a = -1, pair_b = -1;
  Status status = Status::kOk;
  bool has_time = false;  ///< false for unsupported rows (time_us null)
};

/// A context record: the run's fingerprint (there is one per run).
struct RunContext {
  std::uint32_t file = 0;
  std::uint32_t line = 0;
  /// The record without its per-rank list ("ranks"), which dominates its size at scale.
  nlohmann::json json;
  /// The per-rank list summarised: each distinct device ("model (driver D)") with its rank count,
  /// in rank order.
  std::vector<std::pair<std::string, int>> devices;
};

/// Everything read from the inputs.
struct ResultSet {
  /// Input files as shown to people: relative to the directory argument they were found
  /// under, or as given on the command line.
  std::vector<std::string> files;
  /// Each file's name without extension: the variant of runs that carry no labels.
  std::vector<std::string> file_stems;
  std::vector<Row> rows;  ///< every result row, duplicates removed, in input order
  std::unordered_map<std::string, RunContext> contexts;  ///< by run_id
  StringPool strings;
  std::vector<LabelSet> label_sets;              ///< index 0 is the empty set
  std::vector<Diagnostic> diagnostics;           ///< capped per file and kind; see counts
  std::vector<std::uint64_t> diagnostic_counts;  ///< per Diagnostic::Kind, uncapped
  std::uint64_t lines_read = 0;

  /// The value of label `key` in label set `id`, or nullptr.
  const std::string* label(std::uint32_t id, std::string_view key) const;
  /// Number of diagnostics of a kind (including those not kept in `diagnostics`).
  std::uint64_t count(Diagnostic::Kind kind) const;
};

/// How many diagnostics of one kind are kept per file (the rest are only counted).
inline constexpr std::size_t kDiagnosticsKeptPerFileAndKind = 20;

/// Reads every *.jsonl below each directory in `inputs` (recursively, in name order) and every
/// file named directly. Throws Error(kUsage) for an input path that does not exist. Problems
/// inside files become diagnostics; the reader never stops at a bad line.
ResultSet read_results(const std::vector<std::string>& inputs);

/// Results held in memory, read as if from a file called `name`. For tests and benchmarks.
struct InputText {
  std::string name;
  std::string text;
};
ResultSet read_results_texts(const std::vector<InputText>& texts);

/// A file read_results will read: where it is, how the report names it (the directory
/// argument's last component plus the path below it, e.g. "demo/collbench.jsonl"), and its
/// file name without extension (the fallback variant name of unlabelled runs).
struct InputFile {
  std::string path;
  std::string display;
  std::string stem;
};
/// Lists the result files below `inputs` in the order read_results reads them.
std::vector<InputFile> list_input_files(const std::vector<std::string>& inputs);

}  // namespace collbench::report
