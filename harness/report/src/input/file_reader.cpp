#include "input/file_reader.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "collbench/sizes.h"
#include "input/context_reader.h"
#include "input/input_format.h"

namespace collbench::report::detail {

FileReader::FileReader(ResultSet& set, const ImportOptions& imports)
    : set_(set), imports_(imports) {
  if (set_.diagnostic_counts.size() < kKindCount) set_.diagnostic_counts.resize(kKindCount, 0);
}

void FileReader::read_file(const InputFile& input) {
  std::FILE* f = std::fopen(input.path.c_str(), "rb");
  if (!f) {
    const int error = errno;
    FileDiagnostics file = start_file(input);
    file.add(Diagnostic::Kind::kUnreadable, 0,
             fmt::format("cannot open ({}); skipped", std::strerror(error)));
    file.finish(set_);
    return;
  }
  read_input(input, [&](const LineVisitor& visit) { return lines_.read(f, visit); });
  std::fclose(f);
}

void FileReader::read_text(std::string_view text, const InputFile& input) {
  read_input(input, [&](const LineVisitor& visit) { return lines_.read(text, visit); });
}

FileDiagnostics FileReader::start_file(const InputFile& input) {
  const auto index = static_cast<std::uint32_t>(set_.files.size());
  set_.files.push_back(input.display);
  set_.file_stems.push_back(input.stem);
  return FileDiagnostics(index, input.display);
}

template <typename ReadLines>
void FileReader::read_input(const InputFile& input, ReadLines read) {
  FileDiagnostics file = start_file(input);
  LineReader::Result result;
  if (input.format == InputFormat::kCollbench) {
    result = read([&](const Line& line) { read_line(file, line); });
  } else {
    const auto importer = make_importer(input, set_, file, imports_);
    result = read([&](const Line& line) { importer->read_line(line); });
    importer->finish();
  }
  set_.lines_read += result.lines;
  if (result.too_long) {
    file.add(Diagnostic::Kind::kUnreadable, result.lines + 1,
             fmt::format("a line longer than {} (not a results line); the rest of the file is "
                         "skipped",
                         format_bytes(kMaxLineBytes)));
  }
  if (result.error != 0) {
    file.add(Diagnostic::Kind::kUnreadable, result.lines + 1,
             fmt::format("read error ({}); the rest of the file is skipped",
                         std::strerror(result.error)));
  }
  file.finish(set_);
}

void FileReader::read_line(FileDiagnostics& file, const Line& line) {
  // Decoded in place: most lines are result rows, and a row is a few hundred bytes.
  ReadRow& row = set_.rows.emplace_back();
  LineOutcome outcome = decoder_.decode(line, row);
  if (outcome.kind != LineOutcome::kResult) {
    set_.rows.pop_back();
    if (outcome.kind == LineOutcome::kContext) {
      outcome = read_context(decoder_.document(), file.index(), line.number, set_);
    }
    file.count(outcome, line.number, line.unterminated);
    return;
  }
  row.file = file.index();
  row.line = static_cast<std::uint32_t>(line.number);
  file.count(outcome, line.number, line.unterminated);
  // Kept for results.csv; the charts and tables only use rows that passed.
  if (row.status != RowStatus::kOk) {
    file.add(Diagnostic::Kind::kFailedStatus, line.number, failed_status_message(row));
  }
}

}  // namespace collbench::report::detail
