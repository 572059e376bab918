// Reading input files into a ResultSet, line by line: result rows, context records and every
// problem, by file and line. Other tools' output goes through the importer of its format.
#pragma once

#include <string_view>

#include "collbench/report/results.h"
#include "input/diagnostics.h"
#include "input/line_reader.h"
#include "input/row_decoder.h"

namespace collbench::report::detail {

/// Reads files one after the other into one ResultSet. Several readers on several threads may
/// each fill their own (read_results merges them in order).
class FileReader {
 public:
  /// `imports`: what the readers of other tools' output are told (--ranks).
  FileReader(ResultSet& set, const ImportOptions& imports = {});

  void read_file(const InputFile& input);
  /// `text` read as if it were the file `input`.
  void read_text(std::string_view text, const InputFile& input);

 private:
  FileDiagnostics start_file(const InputFile& input);
  /// Reads the file `input` through `read`, which hands each of its lines to a visitor.
  template <typename ReadLines>
  void read_input(const InputFile& input, ReadLines read);
  void read_line(FileDiagnostics& file, const Line& line);

  ResultSet& set_;
  ImportOptions imports_;
  LineReader lines_;
  RowDecoder decoder_;
};

}  // namespace collbench::report::detail
