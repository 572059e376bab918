// The stand-in's settings (COLLBENCH_STAND_IN_*), diagnostics and small helpers.
#include <fmt/format.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cctype>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <thread>

#include "stand_in.h"

namespace collbench::stand_in {
namespace {

[[noreturn]] void bad_setting(std::string_view name, std::string_view value,
                              std::string_view want) {
  diagnostic(fmt::format("{}={}: {}", name, value, want));
  std::_Exit(2);
}

std::optional<std::string> getenv_string(const char* name) {
  const char* v = std::getenv(name);
  if (!v) return std::nullopt;
  return std::string(v);
}

std::optional<long long> to_integer(std::string_view text) {
  if (text.empty() || text.size() > 18) return std::nullopt;
  long long v = 0;
  for (char c : text) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// "16G", "512M", "4096": bytes, with K/M/G as powers of 1024 (collbench's own convention).
std::optional<std::size_t> parse_bytes(std::string_view text) {
  std::size_t scale = 1;
  if (!text.empty()) {
    switch (std::toupper(static_cast<unsigned char>(text.back()))) {
      case 'K':
        scale = std::size_t{1} << 10;
        break;
      case 'M':
        scale = std::size_t{1} << 20;
        break;
      case 'G':
        scale = std::size_t{1} << 30;
        break;
      default:
        break;
    }
    if (scale != 1) text.remove_suffix(1);
  }
  const auto v = to_integer(text);
  if (!v || *v <= 0) return std::nullopt;
  return static_cast<std::size_t>(*v) * scale;
}

Fault parse_fault(const std::string& text) {
  Fault f;
  f.text = text;
  if (text.empty()) return f;
  if (text == "init-hang") {
    f.kind = FaultKind::kInitHang;
    return f;
  }
  const auto at = text.find('@');
  const std::string kind = text.substr(0, at);
  const auto k = at == std::string::npos ? std::nullopt : to_integer(text.substr(at + 1));
  if ((kind == "hang" || kind == "async-error") && k && *k >= 1) {
    f.kind = kind == "hang" ? FaultKind::kHang : FaultKind::kAsyncError;
    f.at = static_cast<std::uint64_t>(*k);
    return f;
  }
  bad_setting("COLLBENCH_STAND_IN_FAULT", text,
              "expected init-hang, hang@K or async-error@K (K >= 1)");
}

Config parse() {
  Config c;
  if (const auto v = getenv_string("COLLBENCH_STAND_IN_GPUS")) {
    const auto n = to_integer(*v);
    if (!n || *n > 16) bad_setting("COLLBENCH_STAND_IN_GPUS", *v, "expected 0 to 16 GPUs per host");
    c.physical_gpus = static_cast<int>(*n);
  }
  // CUDA_VISIBLE_DEVICES as the CUDA runtime reads it: ordinals up to the first invalid entry.
  if (const auto v = getenv_string("CUDA_VISIBLE_DEVICES")) {
    std::string_view rest(*v);
    while (!rest.empty()) {
      const auto comma = rest.find(',');
      const auto n = to_integer(rest.substr(0, comma));
      if (!n || *n >= c.physical_gpus) break;
      c.visible.push_back(static_cast<int>(*n));
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  } else {
    for (int i = 0; i < c.physical_gpus; ++i) c.visible.push_back(i);
  }
  c.memory_bytes = std::size_t{16} << 30;
  if (const auto v = getenv_string("COLLBENCH_STAND_IN_MEMORY")) {
    const auto bytes = parse_bytes(*v);
    if (!bytes || *bytes < (std::size_t{1} << 20)) {
      bad_setting("COLLBENCH_STAND_IN_MEMORY", *v,
                  "expected a size of at least 1M (K/M/G suffixes)");
    }
    c.memory_bytes = *bytes;
  }
  if (const auto v = getenv_string("COLLBENCH_STAND_IN_FAULT")) c.fault = parse_fault(*v);
  if (const auto v = getenv_string("COLLBENCH_STAND_IN_NET")) {
    const std::string n = lower(*v);
    if (n == "socket") {
      c.network = Network::kSocket;
    } else if (n == "ib") {
      c.network = Network::kIB;
    } else if (n == "libfabric") {
      c.network = Network::kLibfabric;
    } else {
      bad_setting("COLLBENCH_STAND_IN_NET", *v, "expected Socket, IB or Libfabric");
    }
  }
  if (const auto v = getenv_string("COLLBENCH_STAND_IN_DELAY_US")) {
    const auto us = to_integer(*v);
    if (!us || *us > 100000) bad_setting("COLLBENCH_STAND_IN_DELAY_US", *v, "expected 0 to 100000");
    c.max_delay_us = static_cast<double>(*us);
  }
  if (const auto v = getenv_string("COLLBENCH_STAND_IN_INIT_TIMEOUT")) {
    const auto s = to_integer(*v);
    if (!s || *s < 1) bad_setting("COLLBENCH_STAND_IN_INIT_TIMEOUT", *v, "expected seconds >= 1");
    c.init_timeout_s = static_cast<double>(*s);
  }
  if (const auto v = getenv_string("COLLBENCH_STAND_IN_SEED")) {
    const auto s = to_integer(*v);
    if (!s) bad_setting("COLLBENCH_STAND_IN_SEED", *v, "expected a non-negative integer");
    c.seed = static_cast<std::uint64_t>(*s);
  } else {
    c.seed = static_cast<std::uint64_t>(Clock::now().time_since_epoch().count()) ^
             (static_cast<std::uint64_t>(getpid()) << 32);
  }
  return c;
}

}  // namespace

const Config& config() {
  // Leaked on purpose: stream workers may still read it while the process exits.
  static const Config* c = new Config(parse());
  return *c;
}

void diagnostic(std::string_view message) {
  const std::string line = fmt::format("collbench GPU stand-in: {}\n", message);
  // One write, so that lines of several ranks sharing a terminal do not interleave.
  const ssize_t ignored = write(STDERR_FILENO, line.data(), line.size());
  (void)ignored;
}

void fatal(std::string_view message) {
  diagnostic(message);
  std::signal(SIGABRT, SIG_DFL);
  std::abort();
}

void Backoff::pause() {
  ++spins_;
  if (spins_ < 16) {
    std::this_thread::yield();
    return;
  }
  // 20 µs doubling to 320 µs: quick for work that is about to finish, cheap for work that is not.
  const unsigned shift = spins_ < 20 ? spins_ - 16 : 4;
  std::this_thread::sleep_for(std::chrono::microseconds(20u << shift));
}

int thread_id() {
  thread_local const int tid = static_cast<int>(syscall(SYS_gettid));
  return tid;
}

const std::string& short_hostname() {
  static const std::string* name = [] {
    char buffer[256] = {};
    gethostname(buffer, sizeof(buffer) - 1);
    std::string n(buffer);
    return new std::string(n.substr(0, n.find('.')));
  }();
  return *name;
}

}  // namespace collbench::stand_in
