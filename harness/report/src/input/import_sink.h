// What every reader of another tool's output does with what it read: rows become collbench's
// own ReadRows (the fields the output states set, the rest null or kNotStated), each run gets a
// run id from a hash of its own text and a context holding what the output says of it, and the
// rows carry the label source=<tool>.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collbench/report/results.h"
#include "input/diagnostics.h"
#include "input/line_reader.h"

namespace collbench::report::detail {

/// Reads one file of another tool's output line by line.
class Importer {
 public:
  virtual ~Importer() = default;
  virtual void read_line(const Line& line) = 0;
  /// The file ended: the last run ends and the file's note is written.
  virtual void finish() = 0;
};

/// Times of an imported row: the headline time the output prints; the slowest rank's, the mean
/// and the fastest not recorded (NaN); no per-iteration statistics (n = 0: no spread).
RowTimes headline_times(double reported_us);

/// What a run states of every row it prints: how it measured and on how many ranks, nodes and
/// iterations (kNotStated where it does not say).
struct RunFacts {
  MeasureMode mode = MeasureMode::kBatch;
  int graph_launches = 0;
  int nranks = kNotStated, nodes = kNotStated, iterations = kNotStated, warmup = kNotStated;
  /// nccl-tests rotates its buffers as collbench's default does; OSU reuses one buffer.
  BufferPolicy buffers = BufferPolicy::kRotate;

  /// nccl-tests' mode: graph with -G N > 0, blocking with -z, else batch.
  void set_mode(int graph, bool blocking) {
    graph_launches = graph;
    mode =
        graph > 0 ? MeasureMode::kGraph : (blocking ? MeasureMode::kBlocking : MeasureMode::kBatch);
  }
};

/// Collects the runs and rows an importer reads from one file into a ResultSet.
///
/// A run's id is "<tool>-<16 hex digits>": a 64-bit FNV-1a hash of every line of the run (from
/// its banner to the next run or the end of the file) as read. The same output read twice (a
/// copied file, a log appended twice) has the same id, so its rows are duplicates as collbench's
/// own would be. A measurement the run printed again (nccl-tests -N cycles, or sizes that round
/// to the same bytes) is a repeat: its k-th occurrence gets the id with "-k" appended.
class ImportSink {
 public:
  /// Rows go into `set`, problems into `file`; `format` is the tool whose output this is;
  /// `imports` what the user says of such output (--ranks).
  ImportSink(ResultSet& set, FileDiagnostics& file, InputFormat format,
             const ImportOptions& imports = {});

  /// Starts a run whose first line is `line` (its banner); the current one ends first.
  void begin_run(std::uint64_t line);
  bool in_run() const { return in_run_; }
  /// Adds the text of a line of the current run to its id.
  void hash_line(std::string_view text);
  /// The current run's context, where the importer puts what the output states.
  RunContext& context() { return context_; }
  /// `ranks` ranks of the current run use a device `model` (ranks of one model add up).
  void add_device(std::string_view model, int ranks);
  /// The backend of the rows added from now on ("nccl" for nccl-tests, "mpi" for OSU).
  void set_backend(std::string_view backend);
  /// Adds the label key=value to the rows of the current run added from now on.
  void add_label(std::string_view key, std::string_view value);
  /// The rank count of the current run's rows, once its output has said what it says:
  /// `from_output` (stated, or told by its rows; 0 when neither) wins, and --ranks is noted where
  /// it differs; else the count given with --ranks (0 when none), whose rows are then labelled
  /// given=ranks and counted for the file's note. Call it before the rows it applies to.
  int settle_ranks(int from_output);
  /// --ranks, 0 when not given.
  int given_ranks() const { return given_ranks_; }
  /// A new row of the current run read at `line`, with what `facts` state and the backend,
  /// labels, file and line set; unmeasured. Counted as a record of the file.
  ReadRow& add_row(std::uint64_t line, const RunFacts& facts);
  /// Whether a row of `values` values fills the `columns` columns of its table; reports the
  /// line when not (truncated when it is the file's cut last line).
  bool row_complete(const Line& line, std::size_t values, std::size_t columns);
  /// Ends the current run (if any): its rows get their ids, each id a context.
  void end_run();
  /// Ends the file: the last run, then one kImported note saying what the file gave and, in
  /// `lacks`, what this kind of output does not record.
  void finish(std::string_view lacks);

  /// A kImported note on `line` (0: the whole file).
  void note(std::uint64_t line, std::string message);
  /// A kImported note on the current run's first line, saying why rows of it are not read; a
  /// run left without rows needs no other note then.
  void note_run(std::string message);
  /// A problem on `line`.
  void problem(Diagnostic::Kind kind, std::uint64_t line, std::string message);

 private:
  ResultSet& set_;
  FileDiagnostics& file_;
  InputFormat format_;
  std::string_view tool_;
  Labels base_labels_;  ///< source=<tool>: every row's
  Labels labels_;       ///< the current run's rows'
  Name backend_;
  int given_ranks_ = 0;  ///< --ranks, 0 when not given
  bool in_run_ = false;
  bool run_noted_ = false;
  bool run_ranks_given_ = false;     ///< the current run's rows take --ranks
  bool run_ranks_disagree_ = false;  ///< the current run's stated count differs from --ranks
  std::uint64_t runs_given_ranks_ = 0;
  std::uint64_t run_line_ = 0;
  std::uint64_t hash_ = 0;
  std::size_t first_row_ = 0;
  RunContext context_;
  std::vector<std::pair<std::string, int>> devices_;
  std::uint64_t runs_ = 0;
  std::uint64_t rows_ = 0;
};

}  // namespace collbench::report::detail
