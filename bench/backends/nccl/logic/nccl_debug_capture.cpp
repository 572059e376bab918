#include "nccl_debug_capture.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "collbench/error.h"
#include "collbench/text.h"
#include "nccl_text.h"

namespace collbench::nccl {
namespace {

enum class LineKind { kBlank, kBanner, kWarn, kInfo, kTrace, kOther };

LineKind classify(std::string_view line) {
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return LineKind::kBlank;
  if (const std::size_t at = line.find("NCCL INFO "); at != std::string_view::npos) {
    return line.substr(at + 10, 13) == "NCCL version " ? LineKind::kBanner : LineKind::kInfo;
  }
  if (line.find("NCCL WARN ") != std::string_view::npos) return LineKind::kWarn;
  if (line.find("NCCL TRACE ") != std::string_view::npos ||
      line.find("NCCL CALL ") != std::string_view::npos) {
    return LineKind::kTrace;
  }
  if (line.find("NCCL version ") != std::string_view::npos) return LineKind::kBanner;
  return LineKind::kOther;
}

}  // namespace

LogLevel parse_level(const std::optional<std::string>& text) {
  if (!text) return LogLevel::kNone;
  const std::string v = upper(*text);
  if (v == "VERSION") return LogLevel::kVersion;
  if (v == "WARN") return LogLevel::kWarn;
  if (v == "INFO") return LogLevel::kInfo;
  if (v == "ABORT") return LogLevel::kAbort;
  if (v == "TRACE") return LogLevel::kTrace;
  return LogLevel::kNone;
}

std::optional<std::string> env(const char* name) {
  const char* value = std::getenv(name);
  if (!value) return std::nullopt;
  return std::string(value);
}

void set_env(const char* name, const std::optional<std::string>& value) {
  if (value) {
    setenv(name, value->c_str(), 1);
  } else {
    unsetenv(name);
  }
}

DebugSettings DebugSettings::from_environment() {
  return DebugSettings{env("NCCL_DEBUG"), env("NCCL_DEBUG_SUBSYS"), env("NCCL_DEBUG_FILE")};
}

bool logs_tuning(const DebugSettings& user) {
  if (parse_level(user.level) < LogLevel::kInfo || !user.subsys) return false;
  const std::string& s = *user.subsys;
  const bool excluding = !s.empty() && s.front() == '^';
  bool named = false;
  for (const auto& item : split_nonempty(std::string_view(s).substr(excluding ? 1 : 0), ',')) {
    const std::string u = upper(item);
    named = named || u == "TUNING" || u == "ALL";
  }
  return excluding ? !named : named;
}

CaptureEnvironment capture_environment(const DebugSettings& user, const std::string& capture_path,
                                       bool tuning) {
  CaptureEnvironment c;
  // NCCL expands '%' in the file name; a literal one must be doubled.
  for (char ch : capture_path) {
    c.file += ch;
    if (ch == '%') c.file += '%';
  }
  const LogLevel level = parse_level(user.level);
  if (level < LogLevel::kInfo) {
    // Nothing of this reaches the user: take what collbench parses (ENV: the effective settings).
    c.level = "INFO";
    c.subsys = tuning ? "INIT,NET,ENV,TUNING" : "INIT,NET,ENV";
    return c;
  }
  c.level = *user.level;  // INFO, ABORT or TRACE: keep what the user chose
  std::vector<std::string> needed = {"INIT"};
  if (tuning) needed.push_back("TUNING");
  const auto is_needed = [&](const std::string& u) {
    return u == "ALL" || std::find(needed.begin(), needed.end(), u) != needed.end();
  };
  if (!user.subsys) {
    // NCCL's default set (INIT,BOOTSTRAP,ENV) has all but TUNING.
    if (!tuning) return c;
    c.subsys = std::string("INIT,BOOTSTRAP,ENV,TUNING");
    c.superset = true;
    return c;
  }
  const std::string& s = *user.subsys;
  if (!s.empty() && s.front() == '^') {
    // An exclusion list: stop excluding what the capture needs.
    std::vector<std::string> kept;
    for (const auto& item : split_nonempty(std::string_view(s).substr(1), ',')) {
      if (is_needed(upper(item)))
        c.superset = true;
      else
        kept.push_back(item);
    }
    c.subsys = kept.empty() ? std::string("ALL") : fmt::format("^{}", fmt::join(kept, ","));
    if (!c.superset) c.subsys.reset();
    return c;
  }
  std::vector<std::string> listed;
  for (const auto& item : split_nonempty(s, ',')) listed.push_back(upper(item));
  if (std::find(listed.begin(), listed.end(), "ALL") != listed.end()) return c;
  std::vector<std::string> added;
  for (const auto& n : needed) {
    if (std::find(listed.begin(), listed.end(), n) == listed.end()) added.push_back(n);
  }
  if (added.empty()) return c;
  // The user's output changes anyway: add ENV too, for the effective settings.
  if (std::find(listed.begin(), listed.end(), "ENV") == listed.end()) added.push_back("ENV");
  c.subsys = s.empty() ? fmt::format("{}", fmt::join(added, ","))
                       : fmt::format("{},{}", s, fmt::join(added, ","));
  c.superset = true;
  return c;
}

std::optional<std::string> LineFilter::forward(std::string_view line) {
  const LineKind kind = classify(line);
  bool keep = false;
  std::string text(line);
  switch (kind) {
    case LineKind::kBlank:
      return std::nullopt;  // WARNs get theirs back below
    case LineKind::kBanner:
      keep = user_ >= LogLevel::kVersion;
      if (keep && user_ < LogLevel::kInfo) {
        // VERSION and WARN print the banner without the host:pid:tid prefix.
        text = line.substr(line.find("NCCL version "));
      }
      break;
    case LineKind::kWarn:
      keep = user_ >= LogLevel::kWarn;
      if (keep) text = "\n" + text;
      break;
    case LineKind::kInfo:
      keep = user_ >= LogLevel::kInfo;
      break;
    case LineKind::kTrace:
      keep = user_ >= LogLevel::kTrace;
      break;
    case LineKind::kOther:
      keep = last_kept_;
      break;
  }
  last_kept_ = keep;
  if (!keep) return std::nullopt;
  return text;
}

std::string expand_debug_file(std::string_view pattern, std::string_view hostname, int pid) {
  std::string host(hostname.substr(0, hostname.find('.')));
  for (char& c : host) {
    if (c == '%' || c == '/') c = '-';
  }
  std::string out;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%' || i + 1 >= pattern.size()) {
      out += pattern[i];
      continue;
    }
    const char next = pattern[++i];
    if (next == '%')
      out += '%';
    else if (next == 'h')
      out += host;
    else if (next == 'p')
      out += std::to_string(pid);
    else {
      out += '%';
      out += next;
    }
  }
  return out;
}

DebugCapture::DebugCapture(std::string hostname, std::FILE* out, bool tuning)
    : hostname_(std::move(hostname)),
      default_out_(out),
      user_(DebugSettings::from_environment()),
      filter_(parse_level(user_.level)) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern =
      fmt::format("{}/collbench-nccl-{}-XXXXXX", tmp && *tmp ? tmp : "/tmp", getpid());
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  fd_ = mkostemp(name.data(), O_CLOEXEC);
  if (fd_ < 0) {
    throw_runtime(
        "cannot create a file for NCCL's debug log in {}: {}; set TMPDIR to a writable directory",
        tmp && *tmp ? tmp : "/tmp", std::strerror(errno));
  }
  path_ = name.data();
  env_ = capture_environment(user_, path_, tuning);
  setenv("NCCL_DEBUG", env_.level.c_str(), 1);
  if (env_.subsys) setenv("NCCL_DEBUG_SUBSYS", env_.subsys->c_str(), 1);
  setenv("NCCL_DEBUG_FILE", env_.file.c_str(), 1);
}

DebugCapture::~DebugCapture() {
  try {
    poll();
  } catch (...) {
    // Forwarding is best effort at teardown.
  }
  restore_environment();
  if (fd_ >= 0) close(fd_);
  if (user_file_) std::fclose(user_file_);
}

LogFacts DebugCapture::facts() const {
  const std::lock_guard lock(mutex_);
  return facts_;
}

EffectiveSettings DebugCapture::settings() const {
  const std::lock_guard lock(mutex_);
  return settings_;
}

TuningLog DebugCapture::take_tuning() {
  const std::lock_guard lock(mutex_);
  TuningLog out = std::move(tuning_);
  tuning_.clear();
  return out;
}

bool DebugCapture::captured() const {
  const std::lock_guard lock(mutex_);
  return facts_.lines > 0;
}

void DebugCapture::restore_environment() {
  const std::lock_guard lock(mutex_);
  if (restored_) return;
  restored_ = true;
  set_env("NCCL_DEBUG", user_.level);
  set_env("NCCL_DEBUG_SUBSYS", user_.subsys);
  set_env("NCCL_DEBUG_FILE", user_.file);
  // NCCL keeps its own descriptor; the name is no longer needed, and an unlinked file cannot be
  // left behind by a job that is killed.
  if (!path_.empty()) unlink(path_.c_str());
}

void DebugCapture::poll() {
  const std::lock_guard lock(mutex_);
  poll_locked();
}

void DebugCapture::poll_locked() {
  if (fd_ < 0) return;
  char buffer[65536];
  while (true) {
    const ssize_t n = read(fd_, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    pending_.append(buffer, static_cast<std::size_t>(n));
  }
  std::size_t start = 0;
  while (true) {
    const std::size_t nl = pending_.find('\n', start);
    if (nl == std::string::npos) break;
    const std::string_view line(pending_.data() + start, nl - start);
    parse_line(line, facts_);
    settings_.add_line(line);
    tuning_.add_line(line);
    if (auto text = filter_.forward(line)) emit(*text + "\n");
    start = nl + 1;
  }
  pending_.erase(0, start);
}

void DebugCapture::emit(const std::string& text) {
  const bool to_file =
      user_.file && !user_.file->empty() && parse_level(user_.level) > LogLevel::kVersion;
  if (to_file && !user_file_ && !user_file_failed_) {
    const std::string name = expand_debug_file(*user_.file, hostname_, getpid());
    user_file_ = std::fopen(name.c_str(), "w");  // as NCCL opens it
    if (user_file_)
      setvbuf(user_file_, nullptr, _IOLBF, 0);
    else
      user_file_failed_ = true;  // NCCL falls back to stdout too
  }
  std::FILE* out = user_file_ ? user_file_ : default_out_;
  if (!out) return;
  std::fputs(text.c_str(), out);
  std::fflush(out);
}

std::vector<std::string> DebugCapture::recent_warnings(std::size_t n) const {
  const std::lock_guard lock(mutex_);
  const auto& w = facts_.warnings;
  const std::size_t from = w.size() > n ? w.size() - n : 0;
  return {w.begin() + static_cast<std::ptrdiff_t>(from), w.end()};
}

}  // namespace collbench::nccl
