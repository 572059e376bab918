#include "nccl_log.h"

#include <cuda_runtime.h>
#include <fmt/format.h>
#include <nccl.h>
#include <strings.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <vector>

#include "runtime.h"
#include "stand_in.h"

namespace collbench::stand_in::nccl_log {
namespace {

struct State {
  std::mutex mutex;
  bool initialised = false;
  int level = kNone;
  std::uint64_t mask = kInit | kBootstrap | kEnv;  // NCCL's default subsystems
  std::FILE* file = stdout;
  std::string last_error;
  bool banner_shown = false;
};

State& state() {
  static State* s = new State;  // leaked: worker threads log during exit
  return *s;
}

std::uint64_t subsystem(const char* name) {
  struct Entry {
    const char* name;
    std::uint64_t bit;
  };
  static constexpr Entry kNames[] = {{"INIT", kInit},
                                     {"COLL", kColl},
                                     {"P2P", kP2p},
                                     {"SHM", 0x8},
                                     {"NET", kNet},
                                     {"GRAPH", kGraph},
                                     {"TUNING", kTuning},
                                     {"ENV", kEnv},
                                     {"ALLOC", kAlloc},
                                     {"CALL", 0x200},
                                     {"PROXY", 0x400},
                                     {"NVLS", 0x800},
                                     {"BOOTSTRAP", kBootstrap},
                                     {"REG", kReg},
                                     {"PROFILE", kProfile},
                                     {"RAS", 0x8000},
                                     {"ALL", kAll}};
  for (const Entry& e : kNames) {
    if (strcasecmp(name, e.name) == 0) return e.bit;
  }
  return 0;
}

/// NCCL's ncclDebugInit: the settings as they are at the first line, never again.
void initialise(State& s) {
  if (s.initialised) return;
  s.initialised = true;
  const char* level = std::getenv("NCCL_DEBUG");
  if (!level) {
    s.level = kNone;
  } else if (strcasecmp(level, "VERSION") == 0) {
    s.level = kVersion;
  } else if (strcasecmp(level, "WARN") == 0) {
    s.level = kWarn;
  } else if (strcasecmp(level, "INFO") == 0) {
    s.level = kInfo;
  } else if (strcasecmp(level, "ABORT") == 0) {
    s.level = 4;
  } else if (strcasecmp(level, "TRACE") == 0) {
    s.level = kTrace;
  } else {
    s.level = kNone;  // NCCL ignores a level it does not know
  }
  if (const char* subsys = std::getenv("NCCL_DEBUG_SUBSYS")) {
    std::string list(subsys);
    const bool invert = !list.empty() && list.front() == '^';
    if (invert) list.erase(0, 1);
    s.mask = invert ? kAll : 0;
    std::size_t start = 0;
    while (start <= list.size()) {
      const std::size_t comma = list.find(',', start);
      const std::string item =
          list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      if (const std::uint64_t bit = subsystem(item.c_str())) {
        s.mask = invert ? (s.mask & ~bit) : (s.mask | bit);
      }
      if (comma == std::string::npos) break;
      start = comma + 1;
    }
  }
  // NCCL_DEBUG_FILE only above VERSION, with %h, %p and %% expanded.
  const char* file = std::getenv("NCCL_DEBUG_FILE");
  if (s.level > kVersion && file) {
    std::string name;
    for (const char* c = file; *c; ++c) {
      if (*c != '%' || !c[1]) {
        name += *c;
        continue;
      }
      ++c;
      if (*c == '%') {
        name += '%';
      } else if (*c == 'h') {
        name += short_hostname();
      } else if (*c == 'p') {
        name += std::to_string(getpid());
      } else {
        name += '%';
        name += *c;
      }
    }
    if (!name.empty()) {
      if (std::FILE* f = std::fopen(name.c_str(), "w")) {
        setlinebuf(f);
        s.file = f;
      }
    }
  }
}

int device_for_prefix() {
  int device = 0;
  (void)cudaGetDevice(&device);
  return device;
}

void write_line(State& s, const std::string& line) {
  std::fwrite(line.data(), 1, line.size(), s.file);
  if (s.file == stdout) std::fflush(stdout);
}

}  // namespace

int level() {
  State& s = state();
  const std::lock_guard lock(s.mutex);
  initialise(s);
  return s.level;
}

bool enabled(std::uint64_t flags) {
  State& s = state();
  const std::lock_guard lock(s.mutex);
  initialise(s);
  return s.level >= kInfo && (s.mask & flags) != 0;
}

void info(std::uint64_t flags, std::string_view message) {
  State& s = state();
  const int device = device_for_prefix();
  const std::lock_guard lock(s.mutex);
  initialise(s);
  if (s.level < kInfo || (s.mask & flags) == 0) return;
  write_line(s, fmt::format("{}:{}:{} [{}] NCCL INFO {}\n", short_hostname(), getpid(), thread_id(),
                            device, message));
}

void warn(std::string_view where, std::string_view message) {
  State& s = state();
  const int device = device_for_prefix();
  const std::lock_guard lock(s.mutex);
  s.last_error = std::string(message);
  initialise(s);
  if (s.level < kWarn) return;
  // NCCL timestamps WARN lines by default (NCCL_DEBUG_TIMESTAMP_LEVELS) and puts a newline first.
  char stamp[64] = {};
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  std::strftime(stamp, sizeof(stamp), "[%F %T] ", &tm);
  write_line(s, fmt::format("\n{}{}:{}:{} [{}] {} NCCL WARN {}\n", stamp, short_hostname(),
                            getpid(), thread_id(), device, where, message));
}

void version_banner() {
  State& s = state();
  const int device = device_for_prefix();
  const std::lock_guard lock(s.mutex);
  initialise(s);
  if (s.banner_shown) return;
  s.banner_shown = true;
  if (s.level == kVersion || s.level == kWarn) {
    write_line(s, version_string() + "\n");
  } else if (s.level >= kInfo) {
    write_line(s, fmt::format("{}:{}:{} [{}] NCCL INFO {}\n", short_hostname(), getpid(),
                              thread_id(), device, version_string()));
  }
}

const char* last_error() {
  State& s = state();
  const std::lock_guard lock(s.mutex);
  // The string lives as long as the process (NCCL's is a static buffer).
  thread_local std::string copy;
  copy = s.last_error;
  return copy.c_str();
}

void plugin_logger(int level, unsigned long flags, const char* file, int line, const char* format,
                   ...) {
  char buffer[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buffer, sizeof(buffer), format, args);
  va_end(args);
  if (level == kWarn) {
    warn(fmt::format("{}:{}", file ? file : "?", line), buffer);
  } else if (level == kInfo) {
    info(flags, buffer);
  }
}

std::string version_string() {
  return fmt::format("NCCL version {}.{}.{}{}+cuda{}.{}", NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH,
                     NCCL_SUFFIX, CUDART_VERSION / 1000, (CUDART_VERSION % 1000) / 10);
}

}  // namespace collbench::stand_in::nccl_log
