#include "input/dedup.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "collbench/sizes.h"
#include "input/diagnostics.h"

namespace collbench::report::detail {

std::uint64_t measurement_hash(const ReadRow& r) {
  std::uint64_t h = 1469598103934665603ull;
  auto mix = [&h](std::uint64_t v) { h = (h ^ v) * 1099511628211ull + (h >> 29); };
  mix(r.run_id.identity());
  mix(r.test.identity());
  mix(static_cast<std::uint64_t>(r.dtype));
  mix(r.op ? 1 + static_cast<std::uint64_t>(*r.op) : 0);
  mix(static_cast<std::uint64_t>(r.placement));
  mix(r.root ? 1 + static_cast<std::uint64_t>(*r.root) : 0);
  mix(r.pair ? 1 + static_cast<std::uint64_t>(r.pair->first) : 0);
  mix(r.pair ? static_cast<std::uint64_t>(r.pair->second) : 0);
  mix(r.bytes);
  mix(r.cycle ? 1 + static_cast<std::uint64_t>(*r.cycle) : 0);
  mix(r.group ? 1 + static_cast<std::uint64_t>(r.group->round) : 0);
  mix(r.group ? static_cast<std::uint64_t>(r.group->index) : 0);
  return h;
}

namespace {

constexpr std::size_t kRowsSortedInHalves = 100'000;

// The identity of a measurement within a run: its point, and the ranks and repetition that took
// it (each -N cycle measures it again, each --split group and round, and each pair of a bw test,
// on ranks of its own).
auto key_of(const ReadRow& r) {
  const int round = r.group ? r.group->round : -1;
  const int index = r.group ? r.group->index : -1;
  return std::tuple(r.run_id, measured_point(r), r.pair, r.cycle, round, index);
}

// (later, first) row index pairs of every duplicate, by later row.
std::vector<std::pair<std::uint32_t, std::uint32_t>> find_duplicates(
    const std::vector<ReadRow>& rows) {
  std::vector<std::pair<std::uint64_t, std::uint32_t>> order(rows.size());
  auto hash_and_sort = [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      order[i] = {measurement_hash(rows[i]), static_cast<std::uint32_t>(i)};
    }
    std::sort(order.begin() + begin, order.begin() + end);
  };
  // This runs on the one thread between reading and the model: a million rows are hashed and
  // sorted in two halves side by side, then merged (the order is total, so it is the same).
  if (rows.size() >= kRowsSortedInHalves && std::thread::hardware_concurrency() > 1) {
    const std::size_t half = rows.size() / 2;
    std::thread second(hash_and_sort, half, rows.size());
    hash_and_sort(0, half);
    second.join();
    std::inplace_merge(order.begin(), order.begin() + half, order.end());
  } else {
    hash_and_sort(0, rows.size());
  }
  std::vector<bool> dropped(rows.size(), false);
  std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i + 1;
    while (j < order.size() && order[j].first == order[i].first) ++j;
    // Rows with equal hashes sort by index, so `a` precedes `b` in the input: the first
    // occurrence wins.
    for (std::size_t a = i; a < j; ++a) {
      if (dropped[order[a].second]) continue;
      for (std::size_t b = a + 1; b < j; ++b) {
        if (dropped[order[b].second] ||
            key_of(rows[order[a].second]) != key_of(rows[order[b].second])) {
          continue;
        }
        dropped[order[b].second] = true;
        pairs.emplace_back(order[b].second, order[a].second);
      }
    }
    i = j;
  }
  std::sort(pairs.begin(), pairs.end());
  return pairs;
}

// Messages in input order, the first few per file.
void report(ResultSet& set, const std::vector<std::pair<std::uint32_t, std::uint32_t>>& pairs) {
  std::vector<std::uint64_t> per_file(set.files.size(), 0);
  std::vector<Diagnostic> messages;
  for (const auto& [later_index, first_index] : pairs) {
    const ReadRow& later = set.rows[later_index];
    const ReadRow& first = set.rows[first_index];
    if (per_file[later.file]++ >= kDiagnosticsKeptPerFileAndKind) continue;
    const bool same = first.busbw() == later.busbw() && first.time() == later.time();
    messages.push_back(
        {Diagnostic::Kind::kDuplicate, set.files[later.file], later.line,
         fmt::format("duplicate of {}:{} (same run {}, {} {} {}){}; skipped", set.files[first.file],
                     first.line, first.run_id, first.test, format_bytes(first.bytes),
                     first.placement, same ? "" : " with different numbers")});
  }
  for (std::size_t f = 0; f < per_file.size(); ++f) {
    if (per_file[f] > kDiagnosticsKeptPerFileAndKind) {
      messages.push_back({Diagnostic::Kind::kDuplicate, set.files[f], 0,
                          fmt::format("{} more duplicate row(s) ({} in all)",
                                      per_file[f] - kDiagnosticsKeptPerFileAndKind, per_file[f])});
    }
  }
  std::stable_sort(messages.begin(), messages.end(),
                   [](const Diagnostic& a, const Diagnostic& b) { return a.file < b.file; });
  for (auto& d : messages) set.diagnostics.push_back(std::move(d));
  set.diagnostic_counts[static_cast<std::size_t>(Diagnostic::Kind::kDuplicate)] += pairs.size();
}

}  // namespace

void remove_duplicates(ResultSet& set) {
  const auto pairs = find_duplicates(set.rows);
  if (pairs.empty()) return;
  report(set, pairs);
  std::vector<bool> dropped(set.rows.size(), false);
  for (const auto& pair : pairs) dropped[pair.first] = true;
  std::size_t out = 0;
  for (std::size_t i = 0; i < set.rows.size(); ++i) {
    if (dropped[i]) continue;
    // Never a row onto itself: a self-move empties its vectors (a group's hosts and ranks).
    if (out != i) set.rows[out] = std::move(set.rows[i]);
    ++out;
  }
  set.rows.resize(out);
}

}  // namespace collbench::report::detail
