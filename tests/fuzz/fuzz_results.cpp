// Fuzz target: the results reader behind collbench-report. Every byte string is a file it may be
// given: it must report problems as diagnostics, never crash or throw.
#include <cstddef>
#include <cstdint>
#include <string>

#include "collbench/report/results.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace collbench::report;
  const ResultSet set =
      read_results_texts({{"fuzz.jsonl", std::string(reinterpret_cast<const char*>(data), size)}});
  (void)set;
  return 0;
}
