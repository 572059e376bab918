#include "input/line_reader.h"

#include <cerrno>
#include <cstring>

namespace collbench::report::detail {

namespace {

// Files are read in blocks: a multi-gigabyte results file never sits in memory whole, and a
// block small enough to stay in the CPU cache is parsed while still there (with large blocks
// the parser waited on memory for most of its time).
constexpr std::size_t kBlockBytes = std::size_t{1} << 20;

bool is_blank(char c) { return c == ' ' || c == '\t'; }

// Trims the line and hands it on unless nothing is left.
void emit(const char* data, std::size_t size, std::uint64_t number, bool unterminated,
          const LineVisitor& visit) {
  while (size > 0 && (data[size - 1] == '\r' || is_blank(data[size - 1]))) --size;
  std::size_t lead = 0;
  // A UTF-8 byte order mark (some editors add one) is not part of the first record.
  if (number == 1 && size >= 3 && std::memcmp(data, "\xEF\xBB\xBF", 3) == 0) lead = 3;
  while (lead < size && is_blank(data[lead])) ++lead;
  if (lead == size) return;
  visit({std::string_view(data + lead, size - lead), number, unterminated});
}

}  // namespace

LineReader::Result LineReader::read(std::FILE* file, const LineVisitor& visit) {
  if (buffer_.size() < kBlockBytes + kLinePadding) buffer_.resize(kBlockBytes + kLinePadding);
  std::size_t filled = 0;
  std::uint64_t lines = 0;
  bool eof = false;
  while (!eof) {
    // One line longer than the block: grow rather than split it, up to the bound.
    if (filled == buffer_.size() - kLinePadding) {
      if (filled >= kMaxLineBytes) return {lines, 0, true};
      buffer_.resize(buffer_.size() * 2);
    }
    const std::size_t want = buffer_.size() - kLinePadding - filled;
    const std::size_t got = std::fread(buffer_.data() + filled, 1, want, file);
    if (got < want) {
      if (std::ferror(file)) return {lines, errno};
      eof = true;
    }
    filled += got;
    std::size_t start = 0;
    while (const void* newline = std::memchr(buffer_.data() + start, '\n', filled - start)) {
      const std::size_t end =
          static_cast<std::size_t>(static_cast<const char*>(newline) - buffer_.data());
      emit(buffer_.data() + start, end - start, ++lines, false, visit);
      start = end + 1;
    }
    if (eof && start < filled) {
      emit(buffer_.data() + start, filled - start, ++lines, true, visit);
      start = filled;
    }
    std::memmove(buffer_.data(), buffer_.data() + start, filled - start);
    filled -= start;
  }
  return {lines, 0};
}

LineReader::Result LineReader::read(std::string_view text, const LineVisitor& visit) {
  buffer_.assign(text.begin(), text.end());
  buffer_.resize(text.size() + kLinePadding, '\0');
  std::size_t start = 0;
  std::uint64_t lines = 0;
  while (start < text.size()) {
    const auto newline = text.find('\n', start);
    const bool last = newline == std::string_view::npos;
    const std::size_t end = last ? text.size() : newline;
    emit(buffer_.data() + start, end - start, ++lines, last, visit);
    start = end + 1;
  }
  return {lines, 0};
}

}  // namespace collbench::report::detail
