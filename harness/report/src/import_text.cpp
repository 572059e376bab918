#include "import_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string>

#include "collbench/text.h"

namespace collbench::report::detail {

namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

}  // namespace

std::string_view strip_launcher_prefix(std::string_view line) {
  line = trim(line);
  // mpirun --tag-output: "[jobid,rank]<stdout>:" or "<stderr>:".
  if (line.starts_with('[')) {
    const auto close = line.find("]<std");
    const auto colon = close == std::string_view::npos ? close : line.find(">:", close);
    if (colon != std::string_view::npos && colon < 40) return trim(line.substr(colon + 2));
  }
  // srun --label: "12: ". A row of a table starts with a number too, but never with "N:".
  std::size_t digits = 0;
  while (digits < line.size() && is_digit(line[digits])) ++digits;
  if (digits > 0 && digits + 1 < line.size() && line[digits] == ':' && line[digits + 1] == ' ') {
    return trim(line.substr(digits + 2));
  }
  return line;
}

std::vector<std::string_view> words(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && is_blank(text[i])) ++i;
    const std::size_t start = i;
    while (i < text.size() && !is_blank(text[i])) ++i;
    if (i > start) out.push_back(text.substr(start, i - start));
  }
  return out;
}

std::string_view nccl_tests_program_test(std::string_view text) {
  constexpr std::string_view kSuffix = "_perf";
  for (auto at = text.find(kSuffix); at != std::string_view::npos;
       at = text.find(kSuffix, at + 1)) {
    // A whole word: "all_reduce_perf" and "all_reduce_perf_mpi", not "my_perfume".
    const std::size_t after = at + kSuffix.size();
    if (after < text.size() && text[after] != '_' && is_name_char(text[after])) continue;
    std::size_t start = at;
    while (start > 0 && is_name_char(text[start - 1])) --start;
    if (start < at) return text.substr(start, at - start);
  }
  return {};
}

bool is_reduction_test(std::string_view test) {
  return test == "all_reduce" || test == "reduce" || test == "reduce_scatter";
}

std::string nccl_version_text(long code) {
  // NCCL_VERSION(X,Y,Z) is X*1000+Y*100+Z before 2.9 and X*10000+Y*100+Z since.
  if (code >= 10000) return fmt::format("{}.{}.{}", code / 10000, code % 10000 / 100, code % 100);
  return fmt::format("{}.{}.{}", code / 1000, code % 1000 / 100, code % 100);
}

bool starts_with_nocase(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() &&
         std::equal(prefix.begin(), prefix.end(), text.begin(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) ==
                  std::tolower(static_cast<unsigned char>(b));
         });
}

}  // namespace collbench::report::detail
