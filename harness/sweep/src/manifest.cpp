#include "collbench/sweep/manifest.h"

#include <fcntl.h>
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>
#include <thread>

#include "collbench/error.h"
#include "collbench/files.h"
#include "collbench/text.h"

namespace collbench::sweep {

namespace {

// Manifests written before events carried "failure" say it only in the reason's first words;
// every such reason starts with failure_words of its kind (anything else, as those versions
// decided, is a runtime failure).
FailureKind failure_of_legacy_reason(std::string_view reason) {
  for (std::size_t i = 0; i < enum_names(FailureKind{}).size(); ++i) {
    const auto kind = static_cast<FailureKind>(i);
    if (reason.starts_with(failure_words(kind))) return kind;
  }
  return FailureKind::kNonZeroExit;
}

// The event of one JSON line, or nullopt for a line that is no event this version knows.
std::optional<ManifestEvent> event_from_json(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("run")) return std::nullopt;
  const auto kind = j.find("event");
  if (kind == j.end() || !kind->is_string() ||
      !enum_from_name<EventKind>(kind->get_ref<const std::string&>())) {
    return std::nullopt;
  }
  ManifestEvent event;
  read_record(j, event, "");
  if (event.event == EventKind::kFailed && !event.failure) {
    event.failure = failure_of_legacy_reason(event.reason);
  }
  return event;
}

}  // namespace

nlohmann::json manifest_schema_tag() {
  return {{"name", "collbench-sweep-manifest"}, {"version", kManifestVersion}};
}

std::span<const std::string_view> enum_names(EventKind) {
  static constexpr std::string_view kNames[] = {"submitted", "started", "collected", "failed"};
  return kNames;
}

std::span<const std::string_view> enum_names(RunRecord::State) {
  static constexpr std::string_view kNames[] = {"unsubmitted", "submitted", "started", "collected",
                                                "failed"};
  return kNames;
}

std::string_view name(RunRecord::State state) { return enum_name(state); }

std::string utc_now() {
  const auto now = std::chrono::system_clock::now();
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:03d}Z",
                     fmt::gmtime(std::chrono::system_clock::to_time_t(now)), ms);
}

ManifestLock::ManifestLock(ManifestLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }

ManifestLock::~ManifestLock() {
  if (fd_ >= 0) ::close(fd_);  // closing the descriptor releases the flock
}

ManifestLock Manifest::lock(double timeout_s, const std::function<void()>& on_wait) const {
  std::error_code ec;
  std::filesystem::create_directories(path_.parent_path(), ec);
  if (ec) throw_runtime("cannot create {}: {}", path_.parent_path().string(), ec.message());
  const int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw_runtime("cannot open manifest {}: {}", path_.string(), std::strerror(errno));
  ManifestLock lock(fd);
  if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return lock;
  if (errno != EWOULDBLOCK)
    throw_runtime("cannot lock {}: {}", path_.string(), std::strerror(errno));
  if (on_wait) on_wait();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return lock;
  }
  throw_runtime(
      "{} is locked by another collbench-sweep (still after {:.0f} s); wait for it to "
      "finish, or find it with `fuser {}`",
      path_.string(), timeout_s, path_.string());
}

std::vector<ManifestEvent> Manifest::events() const {
  std::vector<ManifestEvent> out;
  if (file_kind(path_) == FileKind::kMissing) return out;
  // A manifest is a campaign's bookkeeping: a FIFO or a device in its place would block the
  // sweep or feed it without end.
  const ReadFile file = read_regular_file(path_, kManifestBytes);
  if (!file) {
    throw_usage("{}: {}; the manifest must be the file collbench-sweep wrote: move it aside",
                path_.string(), file.why(kManifestBytes));
  }
  const std::vector<std::string> lines = split(file.text, '\n');
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (trim(lines[i]).empty()) continue;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(lines[i]);
    } catch (const nlohmann::json::parse_error& e) {
      // A crash mid-append leaves an event cut short: the start of a JSON object that ends
      // before it closes. The event it held did not happen; the next append starts on a fresh
      // line (append), so such a line may stand anywhere in the file.
      if (lines[i].front() == '{' && e.byte >= lines[i].size()) continue;
      throw_usage(
          "{}:{}: not a JSON line; the manifest was edited or damaged: fix or delete that line "
          "(the results files stay the truth: finished runs are not measured again)",
          path_.string(), i + 1);
    }
    // A manifest a newer collbench-sweep wrote may mean what this one cannot tell.
    if (j.is_object() && j.contains("schema") && j["schema"].is_object()) {
      const auto& version = j["schema"]["version"];
      if (version.is_number_integer() && version.get<long long>() > kManifestVersion) {
        throw_usage(
            "{}:{}: manifest schema version {}, newer than this collbench-sweep reads ({}); use "
            "the collbench-sweep that wrote it, or a newer one",
            path_.string(), i + 1, version.get<long long>(), kManifestVersion);
      }
    }
    try {
      if (auto event = event_from_json(j)) out.push_back(std::move(*event));
    } catch (const RecordError& e) {
      throw_usage("{}:{}: {}; the manifest was edited or damaged: fix or delete that line",
                  path_.string(), i + 1, e.what());
    }
  }
  // Events are folded in the order they happened, which is their time, not their place in the
  // file: a manifest whose lines were reordered (sorted, reversed) must not turn a finished run
  // into an interrupted one. Times are UTC with milliseconds in one format, so they sort as
  // text; within one millisecond the file's order stands.
  std::stable_sort(out.begin(), out.end(),
                   [](const ManifestEvent& a, const ManifestEvent& b) { return a.time < b.time; });
  return out;
}

std::map<std::string, RunRecord> fold_events(const std::vector<ManifestEvent>& events) {
  std::map<std::string, RunRecord> runs;
  for (const auto& e : events) {
    auto& r = runs[e.run];
    r.last = e;
    switch (e.event) {
      case EventKind::kSubmitted:
        r.state = RunRecord::State::kSubmitted;
        r.job_id = e.job_id;
        r.where = Where::kSlurm;
        r.definition = e.definition;
        r.launch.reset();
        r.raw_jsonl = e.raw_jsonl;
        ++r.attempts;
        break;
      case EventKind::kStarted:
        r.state = RunRecord::State::kStarted;
        r.job_id.clear();
        r.where = Where::kLocal;
        r.definition = e.definition;
        r.launch = e.launch;
        r.raw_jsonl = e.raw_jsonl;
        ++r.attempts;
        break;
      case EventKind::kCollected:
        r.state = RunRecord::State::kCollected;
        break;
      case EventKind::kFailed:
        r.state = RunRecord::State::kFailed;
        break;
    }
    const bool failed = e.event == EventKind::kFailed;
    r.reason = failed ? e.reason : "";
    r.failure = failed ? e.failure : std::nullopt;
  }
  return runs;
}

std::map<std::string, RunRecord> Manifest::runs() const { return fold_events(events()); }

void Manifest::append(ManifestEvent event) const {
  if (event.time.empty()) event.time = utc_now();
  nlohmann::json j = json_value(event);
  j["schema"] = manifest_schema_tag();
  const std::string line = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  const int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) throw_runtime("cannot open manifest {}: {}", path_.string(), std::strerror(errno));
  // A last line cut by a crash ends without a newline: the event starts on a fresh line, so the
  // cut line stays one line that reading skips instead of corrupting this one too.
  std::string text;
  char last = '\n';
  if (::lseek(fd, -1, SEEK_END) >= 0 && ::read(fd, &last, 1) == 1 && last != '\n') text = "\n";
  text += line;
  // One write per event: O_APPEND makes it land whole at the end even with other writers.
  const ssize_t n = ::write(fd, text.data(), text.size());
  const int write_errno = errno;
  ::fsync(fd);
  ::close(fd);
  if (n != static_cast<ssize_t>(text.size())) {
    throw_runtime("cannot append to manifest {}: {}", path_.string(), std::strerror(write_errno));
  }
}

}  // namespace collbench::sweep
