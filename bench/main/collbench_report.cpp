// collbench-report: parse -> run -> one catch.
#include <fmt/format.h>

#include <cstdio>
#include <new>

#include "collbench/error.h"
#include "collbench/report/report.h"

int main(int argc, char** argv) {
  try {
    std::string exit_text;
    const auto options = collbench::report::parse_command_line(argc, argv, exit_text);
    if (!exit_text.empty()) {
      std::fputs(exit_text.c_str(), stdout);
      return 0;
    }
    return collbench::report::run(options, stdout, stderr);
  } catch (const collbench::Error& e) {
    fmt::print(stderr, "collbench-report: {}\n", e.what());
    return collbench::exit_status(e.code());
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "collbench-report: out of memory\n");
    return collbench::exit_status(collbench::ExitCode::kRuntime);
  } catch (const std::exception& e) {
    fmt::print(stderr, "collbench-report: {}\n", e.what());
    return collbench::exit_status(collbench::ExitCode::kRuntime);
  }
}
