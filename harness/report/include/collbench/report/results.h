// Reading collbench results (JSON Lines, results/schema/collbench-results.schema.json) for the
// offline report: every *.jsonl under the given directories plus the given files, with every
// problem in the input reported by file and line instead of stopping the read. Other tools'
// output (nccl-tests' tables and -J JSON, OSU's tables) is read beside it into the same rows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "collbench/context.h"
#include "collbench/name.h"
#include "collbench/result.h"

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
    kImported,      ///< a note: what a file of another tool's output gave, and what it lacks
  };
  Kind kind;
  std::string file;
  std::uint64_t line = 0;
  std::string message;
};

/// Short name of a diagnostic kind ("truncated", "duplicate", ...).
std::string_view name(Diagnostic::Kind kind);

/// What an input file holds: collbench's results, or another tool's output read beside them.
enum class InputFormat : std::uint8_t {
  kCollbench,      ///< collbench's JSON Lines (also the reader of anything not recognised)
  kNcclTestsText,  ///< nccl-tests' printed tables, any version, several runs per file
  kNcclTestsJson,  ///< the JSON document nccl-tests writes with -J FILE
  kOsuText,        ///< OSU Micro-Benchmarks' printed tables
};

/// "nccl-tests text output", "nccl-tests JSON (-J)", "OSU text output", "collbench results".
std::string_view describe(InputFormat format);

/// How many bytes of a file's beginning sniff_format looks at.
inline constexpr std::size_t kSniffBytes = std::size_t{64} << 10;

/// The format of a file that begins with `head`: another tool's when its banner or table header
/// is there (an nccl-tests "# nThread ... nGpus ..." banner or table header, rows of an
/// nccl-tests table pasted without its header, an nccl-tests -J document, an "# OSU ... Test"
/// banner, with or without its '#'), else collbench's, whose reader diagnoses anything else.
InputFormat sniff_format(std::string_view head);

/// The value of an int member of a row (nranks, nodes, iterations, warmup) that an imported
/// source does not state: the lowest int, as Nullable marks null. collbench never writes it.
inline constexpr int kNotStated = NullBits<int>::null();

/// Whether an int member of a row holds a value (see kNotStated).
constexpr bool stated(int value) { return value != kNotStated; }

/// A result row and where it was read.
struct ReadRow : ResultRow {
  std::uint32_t file = 0;  ///< index into ResultSet::files
  std::uint32_t line = 0;
};

/// A run's context record (there is one per run) and where it was read.
struct ReadContext {
  /// The context without its per-rank list (`ranks` is empty): at scale that list is most of
  /// the record, and `devices` is all the report shows of it.
  RunContext context;
  /// Each distinct device ("model (driver D)") with its rank count, in rank order.
  std::vector<std::pair<std::string, int>> devices;
  std::uint32_t file = 0;
  std::uint32_t line = 0;
  /// kCollbench for a context record; for a run read from another tool's output, that format:
  /// its context then holds only what that output states (hosts, devices, library versions).
  InputFormat format = InputFormat::kCollbench;
};

/// Everything read from the inputs.
struct ResultSet {
  /// Input files as shown to people: relative to the directory argument they were found
  /// under, or as given on the command line.
  std::vector<std::string> files;
  /// Each file's name without extension: the variant of runs that carry no labels.
  std::vector<std::string> file_stems;
  std::vector<ReadRow> rows;  ///< every result row, duplicates removed, in input order
  std::unordered_map<Name, ReadContext> contexts;  ///< by run_id
  std::vector<Diagnostic> diagnostics;             ///< capped per file and kind; see counts
  std::vector<std::uint64_t> diagnostic_counts;    ///< per Diagnostic::Kind, uncapped
  std::uint64_t lines_read = 0;

  /// Number of diagnostics of a kind (including those not kept in `diagnostics`).
  std::uint64_t count(Diagnostic::Kind kind) const;
};

/// How many diagnostics of one kind are kept per file (the rest are only counted).
inline constexpr std::size_t kDiagnosticsKeptPerFileAndKind = 20;

/// What the reader is told about other tools' output that the output itself may not say.
struct ImportOptions {
  /// collbench-report --ranks: the rank count of imported runs that state none (0: not given).
  /// A count the output states, or that its rows tell, is kept; a different one is noted.
  int ranks = 0;
};

/// Reads every *.jsonl below each directory in `inputs` (recursively, in name order), every
/// *.txt, *.log, *.out and *.json there that sniff_format recognises as another tool's output,
/// and every file named directly (in the format sniff_format finds). Throws Error(kUsage) for an
/// input path that does not exist. Problems inside files become diagnostics; the reader never
/// stops at a bad line.
ResultSet read_results(const std::vector<std::string>& inputs, const ImportOptions& imports = {});

/// Results held in memory, read as if from a file called `name` (in the format sniff_format
/// finds in `text`). For tests and benchmarks.
struct InputText {
  std::string name;
  std::string text;
};
ResultSet read_results_texts(const std::vector<InputText>& texts,
                             const ImportOptions& imports = {});

/// A file read_results will read: where it is, how the report names it (the directory
/// argument's last component plus the path below it, e.g. "demo/collbench.jsonl"), and its
/// file name without extension (the fallback variant name of unlabelled runs).
struct InputFile {
  std::string path;
  std::string display;
  std::string stem;
  InputFormat format = InputFormat::kCollbench;
};
/// Lists the result files below `inputs` in the order read_results reads them.
std::vector<InputFile> list_input_files(const std::vector<std::string>& inputs);

}  // namespace collbench::report
