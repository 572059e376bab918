// Telling the formats apart by their content: the first lines of another tool's output carry
// its banner, so a file is recognised whatever its name (and collbench's own console output,
// which copies nccl-tests' table, is not taken for nccl-tests').
#include "input/input_format.h"

#include <string_view>

#include "collbench/text.h"
#include "input/import_text.h"
#include "input/nccl_tests_json.h"
#include "input/nccl_tests_text.h"
#include "input/osu_text.h"

namespace collbench::report {

std::string_view describe(InputFormat format) {
  switch (format) {
    case InputFormat::kCollbench:
      return "collbench results";
    case InputFormat::kNcclTestsText:
      return "nccl-tests text output";
    case InputFormat::kNcclTestsJson:
      return "nccl-tests JSON (-J)";
    case InputFormat::kOsuText:
      return "OSU text output";
  }
  return "?";
}

InputFormat sniff_format(std::string_view head) {
  head = head.substr(0, kSniffBytes);
  if (head.starts_with("\xEF\xBB\xBF")) head.remove_prefix(3);
  // collbench's JSON Lines and nccl-tests' -J document both start with '{'.
  if (trim(head).starts_with('{')) {
    return detail::is_nccl_tests_json(head) ? InputFormat::kNcclTestsJson : InputFormat::kCollbench;
  }
  // Rows of an nccl-tests table pasted without its header: a few in a row, or some and then
  // the table's footer, tell it from a file that merely holds numbers.
  constexpr int kHeaderlessRows = 3;
  int rows = 0;
  while (!head.empty()) {
    const auto newline = head.find('\n');
    const std::string_view line = detail::strip_launcher_prefix(head.substr(0, newline));
    head = newline == std::string_view::npos ? std::string_view() : head.substr(newline + 1);
    // collbench's console output: its table is nccl-tests' with more columns.
    if (line.starts_with("# collbench ")) return InputFormat::kCollbench;
    if (detail::is_nccl_tests_banner(line) || detail::is_nccl_tests_header(line)) {
      return InputFormat::kNcclTestsText;
    }
    if (detail::is_osu_banner(line)) return InputFormat::kOsuText;
    if (rows > 0 && detail::is_nccl_tests_footer(line)) return InputFormat::kNcclTestsText;
    rows = detail::is_nccl_tests_headerless_row(line) ? rows + 1 : 0;
    if (rows == kHeaderlessRows) return InputFormat::kNcclTestsText;
  }
  return InputFormat::kCollbench;
}

namespace detail {

std::unique_ptr<Importer> make_importer(const InputFile& input, ResultSet& set,
                                        FileDiagnostics& file, const ImportOptions& imports) {
  ImportSink sink(set, file, input.format, imports);
  switch (input.format) {
    case InputFormat::kNcclTestsText:
      return make_nccl_tests_text_importer(std::move(sink), input.display);
    case InputFormat::kNcclTestsJson:
      return make_nccl_tests_json_importer(std::move(sink), input.display);
    case InputFormat::kOsuText:
      return make_osu_text_importer(std::move(sink));
    case InputFormat::kCollbench:
      break;
  }
  return nullptr;
}

}  // namespace detail
}  // namespace collbench::report
