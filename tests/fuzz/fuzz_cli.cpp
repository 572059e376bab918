// Fuzz target: collbench's command line. The input is split at NUL bytes into arguments; every
// argument vector must parse or end in one usage error, nothing else.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "backends/catalog.h"
#include "collbench/cli.h"
#include "collbench/error.h"
#include "collbench/sizes.h"
#include "collectives/collectives.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace collbench;
  std::vector<std::string> args{"collbench"};
  std::string current;
  for (std::size_t i = 0; i < size; ++i) {
    if (data[i] == 0) {
      args.push_back(current);
      current.clear();
    } else {
      current += static_cast<char>(data[i]);
    }
  }
  args.push_back(current);
  (void)parse_size(current);
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  try {
    const ParseResult parsed = parse_command_line(static_cast<int>(argv.size()), argv.data(),
                                                  all_specs(), backend_catalog());
    if (parsed.exit_text.empty()) {
      for (int n : {1, 2, 7}) {
        try {
          validate_for_world(parsed.options, n, all_specs());
        } catch (const Error& e) {
          if (e.code() != ExitCode::kUsage) throw;
        }
      }
    }
  } catch (const Error& e) {
    if (e.code() != ExitCode::kUsage) __builtin_trap();
  }
  return 0;
}
