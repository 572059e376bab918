#include "input/nccl_tests_infer.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <set>

#include "collbench/text.h"

namespace collbench::report::detail {

namespace {

enum class Factor { kAllReduce, kGather, kOne };  ///< busbw / algbw: 2(n-1)/n, (n-1)/n, 1

// What each test of nccl-tests shows in its rows.
struct Shape {
  std::string_view test;
  bool count_per_rank;  ///< count is size / n / type size
  bool reduces;         ///< redop is an operator (old sendrecv prints "sum" too: see below)
  bool rooted;          ///< root is a rank, not -1
  Factor factor;
  bool checks_in_place;  ///< its in-place #wrong is a number, not "N/A"
};

constexpr std::array<Shape, 7> kShapes{{
    {"all_reduce", false, true, false, Factor::kAllReduce, true},
    {"all_gather", true, false, false, Factor::kGather, true},
    {"reduce_scatter", true, true, false, Factor::kGather, true},
    {"alltoall", true, false, false, Factor::kGather, false},
    {"broadcast", false, false, true, Factor::kOne, true},
    {"reduce", false, true, true, Factor::kOne, true},
    {"sendrecv", false, false, false, Factor::kOne, false},
}};

constexpr int kMaxRanks = 1 << 24;

// The ranks [lo, hi] a factor allows for a ratio in [r_lo, r_hi]; empty when lo > hi.
struct RankRange {
  int lo = 1, hi = kMaxRanks;
  bool empty() const { return lo > hi; }
  void intersect(RankRange other) {
    lo = std::max(lo, other.lo);
    hi = std::min(hi, other.hi);
  }
};

// n with f(n) = 2(n-1)/n (all_reduce) or (n-1)/n (the gathers) in [r_lo, r_hi]: both grow with
// n, so the range is between the inverses of the bounds.
RankRange ranks_for(Factor factor, double r_lo, double r_hi) {
  if (factor == Factor::kOne) {
    return r_lo <= 1.0 && 1.0 <= r_hi ? RankRange{} : RankRange{1, 0};
  }
  const double top = factor == Factor::kAllReduce ? 2.0 : 1.0;  // f(n) = top (1 - 1/n)
  auto inverse = [top](double r) { return top / (top - r); };   // n for f(n) = r
  // In doubles, clamped before the conversion: a ratio at or beyond `top` has no rank count.
  auto clamped = [](double n) { return static_cast<int>(std::clamp(n, 0.0, kMaxRanks + 1.0)); };
  RankRange range;
  if (r_lo >= top) return RankRange{1, 0};
  if (r_lo > 0) range.lo = clamped(std::ceil(inverse(r_lo) - 1e-9));
  if (r_hi < top) range.hi = clamped(std::floor(inverse(std::max(r_hi, 0.0)) + 1e-9));
  range.lo = std::max(range.lo, 1);
  range.hi = std::min(range.hi, kMaxRanks);
  return range;
}

const Shape* shape_of(std::string_view test) {
  const auto shape =
      std::find_if(kShapes.begin(), kShapes.end(), [&](const Shape& s) { return s.test == test; });
  return shape == kShapes.end() ? nullptr : &*shape;
}

// "a, b or c".
std::string or_list(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += names[i];
  }
  return out;
}

}  // namespace

InferredTest infer_nccl_tests_test(std::span<const TableRowEvidence> rows, int known_ranks) {
  std::vector<std::string> notes;

  // size / (count x type size): the rank count for the tests that print a per-rank count.
  std::set<std::uint64_t> quotients;
  for (const auto& row : rows) {
    if (row.count == 0 || row.type_bytes == 0) continue;
    // A count no buffer could hold (count x type size beyond 64 bits) fits no test.
    if (row.count > std::numeric_limits<std::uint64_t>::max() / row.type_bytes) {
      quotients.insert(0);
      continue;
    }
    const std::uint64_t per_count = row.count * row.type_bytes;
    quotients.insert(row.bytes % per_count == 0 ? row.bytes / per_count : 0);
  }
  std::optional<std::uint64_t> quotient;
  if (quotients.size() == 1 && *quotients.begin() > 0) quotient = *quotients.begin();
  if (quotient) notes.push_back(fmt::format("size = {} x count x type size", *quotient));
  // nccl-tests prints size = count x type size x (1 or the ranks) in every row of a table.
  const bool sizes_fit = quotients.size() <= 1 && !quotients.contains(0);
  if (!sizes_fit) notes.emplace_back("size is not one whole multiple of count x type size");

  // redop and root: only what every row agrees on says anything.
  const bool has_redop = std::any_of(rows.begin(), rows.end(), [](auto& r) { return r.redop; });
  const bool all_none = has_redop && std::all_of(rows.begin(), rows.end(), [](auto& r) {
                          return r.redop && *r.redop == "none";
                        });
  const bool all_ops = has_redop && std::all_of(rows.begin(), rows.end(), [](auto& r) {
                         return r.redop && *r.redop != "none";
                       });
  if (all_none) notes.emplace_back("redop none");
  if (all_ops) notes.push_back(fmt::format("redop {}", *rows.front().redop));
  const bool has_root = std::any_of(rows.begin(), rows.end(), [](auto& r) { return r.root; });
  const bool rooted =
      std::any_of(rows.begin(), rows.end(), [](auto& r) { return r.root && *r.root >= 0; });
  if (has_root) notes.emplace_back(rooted ? "a root rank" : "root -1");
  std::optional<bool> in_place_unchecked;
  for (const auto& row : rows) {
    if (!row.in_place_unchecked) continue;
    if (in_place_unchecked && *in_place_unchecked != *row.in_place_unchecked) {
      in_place_unchecked.reset();
      break;
    }
    in_place_unchecked = row.in_place_unchecked;
  }
  if (in_place_unchecked) {
    notes.emplace_back(*in_place_unchecked ? "in-place not checked" : "in-place checked");
  }

  // busbw / algbw from the row with the largest algbw: its two decimals are the most precise.
  // Either printed value may be off by half a unit of its last digit.
  const TableRowEvidence* widest = nullptr;
  for (const auto& row : rows) {
    if (!row.algbw || !row.busbw || *row.algbw <= 0 || *row.busbw < 0) continue;
    if (!widest || *row.algbw > *widest->algbw) widest = &row;
  }
  std::optional<std::pair<double, double>> ratio;
  if (widest && *widest->algbw >= 0.5) {
    constexpr double kHalfUnit = 0.005 + 1e-9;
    const double a = *widest->algbw, b = *widest->busbw;
    ratio = {std::max(b - kHalfUnit, 0.0) / (a + kHalfUnit), (b + kHalfUnit) / (a - kHalfUnit)};
    notes.push_back(fmt::format("busbw / algbw = {:.3f}", b / a));
  }

  // The tests the rows fit, each with the ranks it allows.
  std::vector<std::pair<const Shape*, RankRange>> fits;
  for (const Shape& shape : kShapes) {
    if (!sizes_fit) break;
    RankRange range;
    if (known_ranks > 0) range = {known_ranks, known_ranks};
    if (quotient) {
      if (shape.count_per_rank) {
        const int n = static_cast<int>(std::min<std::uint64_t>(*quotient, kMaxRanks));
        range.intersect({n, n});
      } else if (*quotient != 1) {
        continue;
      }
    }
    // Old versions print "sum" as sendrecv's redop, so an operator does not rule it out.
    if (all_none && shape.reduces) continue;
    if (all_ops && !shape.reduces && shape.test != "sendrecv") continue;
    if (has_root && rooted != shape.rooted) continue;
    if (in_place_unchecked && *in_place_unchecked == shape.checks_in_place) continue;
    // Layouts without a redop column (before 2.1x) printed all_gather's busbw as its algbw.
    const bool ratio_holds = has_redop || shape.factor != Factor::kGather;
    if (ratio && ratio_holds) range.intersect(ranks_for(shape.factor, ratio->first, ratio->second));
    if (!range.empty()) fits.emplace_back(&shape, range);
  }

  InferredTest out;
  for (const auto& [shape, range] : fits) out.possible.emplace_back(shape->test);
  out.evidence = join(notes, ", ");
  if (fits.size() != 1) return out;
  const auto& [shape, range] = fits.front();
  out.test = shape->test;
  // A one-factor test's bandwidths say nothing of its ranks; the others' range may be one.
  if (shape->factor != Factor::kOne && (quotient || ratio) && range.lo == range.hi) {
    out.nranks = range.lo;
  }
  return out;
}

std::optional<double> nccl_tests_bus_factor(std::string_view test, int nranks) {
  const Shape* shape = shape_of(test);
  if (!shape) return std::nullopt;
  if (shape->factor == Factor::kOne) return 1.0;
  if (nranks <= 0) return std::nullopt;
  const double n = nranks;
  return (shape->factor == Factor::kAllReduce ? 2.0 : 1.0) * (n - 1) / n;
}

std::string possible_tests_text(const InferredTest& inferred) {
  return inferred.possible.empty() ? std::string("none of nccl-tests' tests")
                                   : or_list(inferred.possible);
}

}  // namespace collbench::report::detail
