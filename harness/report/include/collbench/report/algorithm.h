// What the library ran each point with (the rows' "algorithm" record, NCCL's algorithm and
// protocol), named as the report shows it: "RING/LL128", "NVLS/SIMPLE", "sym:<kernel>", "CE".
// Tree and NVLS inflate busbw on two nodes, so the report marks where a curve switches
// algorithm and says which algorithm a verdict's size ran with.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/result.h"

namespace collbench::report {

struct ReadRow;
struct Point;
struct Series;

/// The algorithm of one point: the choice most of its rows' calls made.
struct PointAlgorithm {
  std::string algorithm;  ///< "RING", "TREE", "NVLS", "NVLS_TREE", a symmetric kernel, "CE"
  std::string protocol;   ///< "LL", "LL128", "SIMPLE", or "" where the path has none
  std::string path;       ///< "normal", "symmetric", "copy_engine" (or "" when not stated)
  /// Calls chose differently: a row says so, or the merged rows (repeats) disagree.
  bool mixed = false;
  std::string detail;  ///< the first row's detail ("RING/LL128, 16 channels"); "" when none

  /// "RING/LL128", "sym:AllReduce_AGxLL_R", "CE"; without the mixed mark.
  std::string name() const;
  /// name() with a trailing "*" when mixed.
  std::string label() const;
  /// Whether two points ran the same algorithm and protocol on the same path (mixed aside).
  bool same_choice(const PointAlgorithm& other) const;
};

/// The algorithm of rows merged into one point; nullopt when none of them records one.
std::optional<PointAlgorithm> merge_algorithms(const std::vector<const ReadRow*>& rows);

/// An algorithm's name as NCCL reads NCCL_ALGO: case and "_" do not matter (NVLS_TREE and
/// NVLSTree are one algorithm), so equal keys are one algorithm.
std::string algorithm_key(std::string_view a);

/// A size where a series' algorithm changes: points[point] is the first point of the new one.
struct AlgorithmSwitch {
  std::size_t point = 0;
  std::string from, to;  ///< PointAlgorithm::name()

  /// "TREE/LL→RING/LL128".
  std::string label() const;
};

/// The switches along ascending sizes; points without an algorithm are passed over.
std::vector<AlgorithmSwitch> algorithm_switches(const std::vector<Point>& points);

/// Consecutive sizes of a series that ran one algorithm: "TREE/LL" from 8 B to 64 KiB.
struct AlgorithmRange {
  std::string label;  ///< PointAlgorithm::label() of the range's first point ("*" when any mixed)
  std::uint64_t first_bytes = 0, last_bytes = 0;
  int sizes = 0;
};
std::vector<AlgorithmRange> algorithm_ranges(const Series& series);

/// Whether any point of the series records an algorithm.
bool has_algorithm(const Series& series);

/// Whether `algorithm` moves less data over the network than the bus-bandwidth formula assumes
/// at 2 nodes (NCCL's Tree, NVLS and NVLS_TREE), so that busbw there exceeds a ring's.
bool inflates_two_node_busbw(const std::string& algorithm);

}  // namespace collbench::report
