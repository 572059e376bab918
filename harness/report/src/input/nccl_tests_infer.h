// Which nccl-tests test printed a table that nothing names, from its rows alone.
//
// Most pasted nccl-tests output is the table without its command line or its "# Collective test
// starting" line. The numbers still say which test it is: nccl-tests prints `count` as the
// count each rank passes to NCCL, so size / (count x type size) is the rank count for
// all_gather, reduce_scatter and alltoall and 1 for the others; busbw / algbw is 2(n-1)/n for
// all_reduce, (n-1)/n for all_gather, reduce_scatter and alltoall and 1 for broadcast, reduce
// and sendrecv; redop is "none" for the tests that reduce nothing; root is -1 for the tests
// without one; alltoall and sendrecv do not check their in-place run. What the rows cannot tell
// apart stays unnamed, with the tests that remain possible.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace collbench::report::detail {

/// What one row of a table shows of its test (the out-of-place half's bandwidths).
struct TableRowEvidence {
  std::uint64_t bytes = 0;
  std::uint64_t count = 0;
  std::size_t type_bytes = 0;
  std::optional<std::string_view> redop;  ///< nullopt: the table has no redop column
  std::optional<int> root;                ///< nullopt: the table has no root column
  std::optional<double> algbw, busbw;     ///< nullopt: not printed as a number
  /// The in-place half's #wrong is "N/A" while the out-of-place half's is a number; nullopt
  /// when the row does not tell (no #wrong columns, or neither half checked).
  std::optional<bool> in_place_unchecked;
};

struct InferredTest {
  std::string test;                   ///< "" when the rows do not tell
  int nranks = 0;                     ///< 0: not known
  std::vector<std::string> possible;  ///< the tests that fit the rows (one when `test` is set)
  std::string evidence;               ///< what decided, for the file's note
};

/// `known_ranks`: the rank count the output states elsewhere (its device lines), 0 if none.
InferredTest infer_nccl_tests_test(std::span<const TableRowEvidence> rows, int known_ranks);

/// busbw / algbw of nccl-tests' `test` on `nranks` ranks (0: not known); nullopt when it
/// depends on the ranks and they are not known, or the test is not one of nccl-tests'.
std::optional<double> nccl_tests_bus_factor(std::string_view test, int nranks);

/// The tests `inferred` leaves possible, for a message: "all_gather or alltoall".
std::string possible_tests_text(const InferredTest& inferred);

}  // namespace collbench::report::detail
