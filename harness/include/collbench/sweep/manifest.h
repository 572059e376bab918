// The campaign manifest (<results>/<campaign>/manifest.jsonl): an append-only log of what
// happened to every run (submitted, started, collected, failed). It is the source of truth for
// resuming: a run's state is the last event recorded for it. Every command that changes it holds
// an exclusive flock on the file, so two concurrent submits cannot both submit a run.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace collbench::sweep {

/// The manifest records' schema tag ({"name": "collbench-sweep-manifest", "version": 1}), so that
/// readers of results/**/*.jsonl can tell them from result records.
nlohmann::json manifest_schema_tag();

/// What the manifest says about one run.
struct RunRecord {
  enum class State {
    kNone,       ///< never submitted
    kSubmitted,  ///< handed to Slurm; its job's fate is known to Slurm and the job's files
    kStarted,    ///< a local run began and has not been recorded as ended
    kCollected,  ///< finished and its labelled results are in <run>.jsonl
    kFailed,     ///< failed; `reason` says why
  };
  State state = State::kNone;
  std::string job_id;   ///< Slurm job id of the latest submission
  int attempts = 0;     ///< submissions and local starts so far
  std::string reason;   ///< why it failed
  nlohmann::json last;  ///< the latest event
};

std::string_view name(RunRecord::State state);

/// An exclusive lock on the manifest; released when destroyed.
class ManifestLock {
 public:
  ManifestLock(ManifestLock&& other) noexcept;
  ManifestLock& operator=(ManifestLock&&) = delete;
  ~ManifestLock();

 private:
  friend class Manifest;
  explicit ManifestLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

class Manifest {
 public:
  explicit Manifest(std::filesystem::path path) : path_(std::move(path)) {}

  const std::filesystem::path& path() const { return path_; }

  /// Takes the exclusive lock, creating the file (and its directory) when needed. When another
  /// process holds it, calls `on_wait` once and waits up to `timeout_s`; then throws
  /// Error(kRuntime).
  ManifestLock lock(double timeout_s, const std::function<void()>& on_wait = {}) const;

  /// Every event, in order. A last line cut short by a crash is skipped; any other line that is
  /// not JSON is an error naming the line.
  std::vector<nlohmann::json> events() const;

  /// The state of every run that has events.
  std::map<std::string, RunRecord> runs() const;

  /// Appends one event (schema tag and time are added) as one write, then syncs the file.
  void append(nlohmann::json event) const;

 private:
  std::filesystem::path path_;
};

/// Folds events into per-run records (exposed for tests).
std::map<std::string, RunRecord> fold_events(const std::vector<nlohmann::json>& events);

/// The current UTC time as an ISO 8601 string.
std::string utc_now();

}  // namespace collbench::sweep
