// read_results: the files are split into contiguous groups of about equal bytes, read in
// parallel and merged in input order, so the result is that of a sequential read. What can only
// be judged once everything is read (duplicates, rows without a context) comes last.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <iterator>
#include <thread>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "collbench/report/results.h"
#include "input/context_reader.h"
#include "input/dedup.h"
#include "input/diagnostics.h"
#include "input/file_reader.h"

namespace collbench::report {

namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kBytesPerRow = 600;  // a result line is 600-900 bytes
constexpr std::size_t kMaxThreads = 4;
constexpr std::size_t kGroupsPerThread = 16;

// Asks for the rows' reserved block to be backed by huge pages before its first row is written.
// The rows are most of the report's memory (312 B each, held once per reader and once merged).
// Filled 4 KiB page by page, a million rows took 150,000 page faults: with both readers faulting
// in one address space, a sixth of the report's CPU time on a virtual machine, and 1.2 s of its
// 4.3 s wall time (report_bench, BuildReport). With transparent huge pages on "madvise" or
// "always", a fault maps 2 MiB. Only whole pages inside the block are advised; where the kernel
// has none to give, or refuses the advice, the rows are read as before.
template <typename T>
void advise_huge_pages(const std::vector<T>& rows) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<std::uintptr_t>(rows.data());
  const auto end = begin + rows.capacity() * sizeof(T);
  const auto first = (begin + page - 1) / page * page;
  const auto last = end / page * page;
  if (rows.capacity() * sizeof(T) >= (std::uintptr_t{4} << 20) && last > first) {
    madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
  }
#else
  (void)rows;
#endif
}

// Appends `from` (read from later files) to `into`.
void merge_into(ResultSet& into, ResultSet&& from) {
  const auto file_offset = static_cast<std::uint32_t>(into.files.size());
  std::move(from.files.begin(), from.files.end(), std::back_inserter(into.files));
  std::move(from.file_stems.begin(), from.file_stems.end(), std::back_inserter(into.file_stems));
  for (auto& row : from.rows) {
    row.file += file_offset;
    into.rows.push_back(std::move(row));
  }
  std::vector<ReadRow>().swap(from.rows);
  // In input order, so that the duplicates' messages are too.
  std::vector<std::pair<const Name, ReadContext>*> contexts;
  for (auto& entry : from.contexts) contexts.push_back(&entry);
  std::sort(contexts.begin(), contexts.end(), [](const auto* a, const auto* b) {
    return std::pair(a->second.file, a->second.line) < std::pair(b->second.file, b->second.line);
  });
  for (auto* entry : contexts) {
    auto& [run, context] = *entry;
    const auto existing = into.contexts.find(run);
    if (existing != into.contexts.end()) {
      detail::add_diagnostic(
          into, {Diagnostic::Kind::kDuplicate, into.files[context.file + file_offset], context.line,
                 detail::duplicate_context_message(into, run, existing->second)});
      continue;
    }
    context.file += file_offset;
    into.contexts.emplace(run, std::move(context));
  }
  std::move(from.diagnostics.begin(), from.diagnostics.end(), std::back_inserter(into.diagnostics));
  for (std::size_t k = 0; k < from.diagnostic_counts.size() && k < into.diagnostic_counts.size();
       ++k) {
    into.diagnostic_counts[k] += from.diagnostic_counts[k];
  }
  into.lines_read += from.lines_read;
}

void finish(ResultSet& set) {
  detail::remove_duplicates(set);
  detail::report_rows_without_context(set);
}

// Contiguous groups of files, [first, second), of about equal bytes.
std::vector<std::pair<std::size_t, std::size_t>> split(const std::vector<std::uint64_t>& sizes,
                                                       std::size_t groups) {
  std::uint64_t total = 0;
  for (auto size : sizes) total += size;
  std::vector<std::pair<std::size_t, std::size_t>> ranges;
  std::size_t begin = 0;
  std::uint64_t acc = 0;
  for (std::size_t g = 0; g < groups; ++g) {
    std::size_t end = begin;
    const std::uint64_t target = total * (g + 1) / groups;
    while (end < sizes.size() && (acc < target || end == begin)) acc += sizes[end++];
    if (g + 1 == groups) end = sizes.size();
    ranges.emplace_back(begin, end);
    begin = end;
  }
  return ranges;
}

// Reads files [begin, end) into `set`.
void read_range(const std::vector<InputFile>& files, const std::vector<std::uint64_t>& sizes,
                std::size_t begin, std::size_t end, const ImportOptions& imports, ResultSet& set) {
  std::uint64_t bytes = 0;
  for (std::size_t i = begin; i < end; ++i) bytes += sizes[i];
  set.rows.reserve(bytes / kBytesPerRow);
  advise_huge_pages(set.rows);
  detail::FileReader reader(set, imports);
  for (std::size_t i = begin; i < end; ++i) reader.read_file(files[i]);
}

// One ResultSet from the parts, in order. Every part's rows are released as soon as they are
// moved, so at most one part is held twice.
ResultSet merge(std::vector<ResultSet>& parts) {
  std::size_t total_rows = 0;
  for (const auto& part : parts) total_rows += part.rows.size();
  ResultSet set = std::move(parts[0]);
  std::vector<ReadRow> rows;
  rows.reserve(total_rows);
  advise_huge_pages(rows);
  std::move(set.rows.begin(), set.rows.end(), std::back_inserter(rows));
  set.rows = std::move(rows);
  for (std::size_t g = 1; g < parts.size(); ++g) merge_into(set, std::move(parts[g]));
  return set;
}

}  // namespace

ResultSet read_results(const std::vector<std::string>& inputs, const ImportOptions& imports) {
  const auto files = list_input_files(inputs);
  std::vector<std::uint64_t> sizes;
  for (const auto& f : files) {
    std::error_code ec;
    const auto size = fs::file_size(f.path, ec);
    sizes.push_back(ec ? 0 : size);
  }
  const std::size_t hw = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t workers = std::min({hw, kMaxThreads, files.size()});
  if (workers <= 1) {
    ResultSet set;
    read_range(files, sizes, 0, files.size(), imports, set);
    finish(set);
    return set;
  }
  // More groups than threads: merging moves one group's rows while it holds them twice, so
  // small groups keep the peak near one copy of the rows (a campaign's rows are most of what the
  // report holds); and the threads finish together, the last group being small (with 4 groups a
  // thread, one reader of a million rows ran alone for its last 0.2 s).
  const std::size_t groups = std::min(files.size(), workers * kGroupsPerThread);
  const auto ranges = split(sizes, groups);
  std::vector<ResultSet> parts(groups);
  std::vector<std::exception_ptr> errors(groups);
  std::atomic<std::size_t> next{0};
  std::vector<std::thread> threads;
  for (std::size_t w = 0; w < workers; ++w) {
    threads.emplace_back([&] {
      for (std::size_t g = next++; g < groups; g = next++) {
        try {
          read_range(files, sizes, ranges[g].first, ranges[g].second, imports, parts[g]);
        } catch (...) {
          errors[g] = std::current_exception();
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  ResultSet set = merge(parts);
  finish(set);
  return set;
}

ResultSet read_results_texts(const std::vector<InputText>& texts, const ImportOptions& imports) {
  ResultSet set;
  detail::FileReader reader(set, imports);
  for (const auto& t : texts) {
    reader.read_text(t.text,
                     {t.name, t.name, fs::path(t.name).stem().string(), sniff_format(t.text)});
  }
  finish(set);
  return set;
}

}  // namespace collbench::report
