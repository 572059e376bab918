// The campaign manifest (<results>/<campaign>/manifest.jsonl): an append-only log of what
// happened to every run (submitted, started, collected, failed). It is the source of truth for
// resuming: a run's state is the last event recorded for it. Every command that changes it holds
// an exclusive flock on the file, so two concurrent submits cannot both submit a run.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "collbench/record.h"
#include "collbench/sweep/failure.h"
#include "collbench/sweep/launch.h"
#include "collbench/sweep/matrix.h"
#include "collbench/sweep/process.h"

namespace collbench::sweep {

/// The version of the manifest's records this collbench-sweep writes and reads; a manifest with
/// a newer one is refused rather than misread.
inline constexpr int kManifestVersion = 1;

/// The most a manifest may hold: tens of thousands of events are a few MB.
inline constexpr std::uint64_t kManifestBytes = std::uint64_t{256} << 20;

/// The manifest records' schema tag ({"name": "collbench-sweep-manifest", "version": 1}), so that
/// readers of results/**/*.jsonl can tell them from result records.
nlohmann::json manifest_schema_tag();

/// What happened to a run.
enum class EventKind {
  kSubmitted,  ///< handed to Slurm
  kStarted,    ///< a local run began
  kCollected,  ///< its labelled results are in <run>.jsonl
  kFailed,     ///< it failed; reason and failure say why
};
/// "submitted", "started", "collected", "failed".
std::span<const std::string_view> enum_names(EventKind);

/// One line of the manifest. Which members an event has depends on its kind (those left empty
/// are not written):
///   submitted  run, job_id, output, raw_jsonl, env_file, command, labels, definition
///   started    run, mode, attempt, output, raw_jsonl, command, labels, definition, launch
///   collected  run, job_id (Slurm) or attempt and seconds (local), file, results, wrong,
///              bad_lines (Slurm)
///   failed     run, job_id (Slurm) or attempt and seconds (local), reason, failure
/// Every line also carries the schema tag and its time. Members a line has beyond these are
/// ignored when reading.
struct ManifestEvent {
  ManifestEvent() = default;
  ManifestEvent(EventKind event_in, std::string run_in) : event(event_in), run(std::move(run_in)) {}

  EventKind event = EventKind::kSubmitted;
  std::string run;
  std::string job_id;          ///< Slurm job id
  std::optional<Where> mode;   ///< kLocal for local starts
  std::optional<int> attempt;  ///< local attempts, counted from 1
  std::string output;          ///< the job's or the run's output file
  std::string raw_jsonl;       ///< where the job writes its results
  std::string env_file;        ///< the run's environment file (Slurm)
  std::vector<std::string> command;
  std::optional<RunLabels> labels;
  /// What defined the run when it was submitted or started (absent in older manifests).
  std::optional<RunDefinition> definition;
  /// The local launch (mpirun, the leader of its session), so that a later collbench-sweep can
  /// tell whether it still runs.
  std::optional<LaunchId> launch;
  std::string file;  ///< the collected results file, relative to the campaign's results
  std::optional<std::uint64_t> results;    ///< result rows collected
  std::optional<std::uint64_t> wrong;      ///< mismatched elements in them
  std::optional<std::uint64_t> bad_lines;  ///< lines of the raw results that were not JSON
  std::optional<double> seconds;           ///< how long a local run took
  std::string reason;                      ///< why it failed, in words
  /// What kind of failure. Manifests written before this member existed lack it; reading infers
  /// it from the reason (see Manifest::events).
  std::optional<FailureKind> failure;
  std::string time;  ///< UTC, ISO 8601; append sets it when empty

  static constexpr auto fields() {
    using E = ManifestEvent;
    constexpr auto kOmit = Presence::kOmittedWhenEmpty;
    return std::tuple{Field{"event", &E::event},
                      Field{"run", &E::run},
                      Field{"job_id", &E::job_id, kOmit},
                      Field{"mode", &E::mode, kOmit},
                      Field{"attempt", &E::attempt, kOmit},
                      Field{"output", &E::output, kOmit},
                      Field{"raw_jsonl", &E::raw_jsonl, kOmit},
                      Field{"env_file", &E::env_file, kOmit},
                      Field{"command", &E::command, kOmit},
                      Field{"labels", &E::labels, kOmit},
                      Field{"definition", &E::definition, kOmit},
                      Field{"launch", &E::launch, kOmit},
                      Field{"file", &E::file, kOmit},
                      Field{"results", &E::results, kOmit},
                      Field{"wrong", &E::wrong, kOmit},
                      Field{"bad_lines", &E::bad_lines, kOmit},
                      Field{"seconds", &E::seconds, kOmit},
                      Field{"reason", &E::reason, kOmit},
                      Field{"failure", &E::failure, kOmit},
                      Field{"time", &E::time, kOmit}};
  }
};

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
  std::string job_id;                  ///< Slurm job id of the latest submission
  int attempts = 0;                    ///< submissions and local starts so far
  std::string reason;                  ///< why it failed
  std::optional<FailureKind> failure;  ///< what kind of failure (state kFailed)
  Where where = Where::kSlurm;         ///< how it was last started: submitted, or locally
  /// Its definition at its latest submission or local start (nullopt in older manifests).
  std::optional<RunDefinition> definition;
  std::optional<LaunchId> launch;  ///< its latest local launch
  std::string raw_jsonl;           ///< where its latest submission or start writes its results
  ManifestEvent last;              ///< the latest event
  /// Collected according to its results file, which the manifest did not record (it was
  /// deleted, emptied, or cut short before the collected event): see load_records.
  bool found_on_disk = false;
};

/// "unsubmitted", "submitted", "started", "collected", "failed".
std::span<const std::string_view> enum_names(RunRecord::State);
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
  /// not JSON, or an event with a member of the wrong type, is an error naming the line. JSON
  /// lines that are no event (no "event" or "run", or an event kind this version does not know)
  /// are skipped. A failed event without "failure" (written before it existed) gets the kind its
  /// reason starts with (Failure::reason, "wrong results: ..."); another reason counts as a
  /// non-zero exit.
  std::vector<ManifestEvent> events() const;

  /// The state of every run that has events.
  std::map<std::string, RunRecord> runs() const;

  /// Appends one event (with the schema tag, and the time when it has none) as one write, then
  /// syncs the file.
  void append(ManifestEvent event) const;

 private:
  std::filesystem::path path_;
};

/// Folds events into per-run records (exposed for tests).
std::map<std::string, RunRecord> fold_events(const std::vector<ManifestEvent>& events);

/// The current UTC time as an ISO 8601 string.
std::string utc_now();

}  // namespace collbench::sweep
