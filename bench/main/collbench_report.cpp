// collbench-report: parse -> run -> one catch.
#include <fmt/format.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <string_view>

#include "collbench/error.h"
#include "collbench/report/report.h"

namespace {

// An error line on stderr. It must not throw: when stderr itself cannot be written (a full
// device), the exit code is all that is left to tell.
void print_error(std::string_view what) noexcept {
  std::fputs("collbench-report: ", stderr);
  std::fwrite(what.data(), 1, what.size(), stderr);
  std::fputc('\n', stderr);
}

int run_report(int argc, char** argv) {
  try {
    std::string exit_text;
    const auto options = collbench::report::parse_command_line(argc, argv, exit_text);
    if (!exit_text.empty()) {
      if (std::fputs(exit_text.c_str(), stdout) == EOF) {
        throw collbench::Error(
            collbench::ExitCode::kRuntime,
            fmt::format("cannot write to standard output: {}", std::strerror(errno)));
      }
      return 0;
    }
    return collbench::report::run(options, stdout, stderr);
  } catch (const collbench::Error& e) {
    print_error(e.what());
    return collbench::exit_status(e.code());
  } catch (const std::bad_alloc&) {
    print_error("out of memory");
    return collbench::exit_status(collbench::ExitCode::kRuntime);
  } catch (const std::exception& e) {
    print_error(e.what());
    return collbench::exit_status(collbench::ExitCode::kRuntime);
  }
}

}  // namespace

int main(int argc, char** argv) {
  // A closed pipe or a file size limit then fails the write (EPIPE, EFBIG), which is reported
  // with exit 3, instead of killing the process with a signal.
  std::signal(SIGPIPE, SIG_IGN);
  std::signal(SIGXFSZ, SIG_IGN);
  const int code = run_report(argc, argv);
  // Standard output is buffered: a full device or a closed pipe shows only when it is flushed,
  // and a summary, --help or JSON that did not arrive is a failed run (3), not a success.
  const bool stdout_ok = std::fflush(stdout) == 0 && !std::ferror(stdout);
  if (!stdout_ok && code != collbench::exit_status(collbench::ExitCode::kUsage)) {
    print_error(fmt::format("cannot write to standard output: {}", std::strerror(errno)));
    return collbench::exit_status(collbench::ExitCode::kRuntime);
  }
  // A failed error line on stderr (a full device) is a failed write too.
  if (std::ferror(stderr) && code == 0)
    return collbench::exit_status(collbench::ExitCode::kRuntime);
  return code;
}
