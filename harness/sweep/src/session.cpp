#include "session.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <optional>

#include "collbench/error.h"
#include "collbench/sweep/collect.h"
#include "collbench/sweep/outputs.h"
#include "collbench/sweep/process.h"
#include "files.h"

namespace collbench::sweep {
namespace {

namespace fs = std::filesystem;

fs::path absolute_if_path(const fs::path& p) {
  // A bare name is looked up on PATH (by the template or by us); a path is made absolute so that
  // jobs starting in another directory find it.
  if (p.string().find('/') == std::string::npos) return p;
  return fs::absolute(p).lexically_normal();
}

Tools resolve_tools(const SweepSettings& s, const Campaign& c) {
  Tools t;
  if (!s.collbench.empty()) {
    t.collbench = absolute_if_path(s.collbench);
  } else if (!c.collbench.empty()) {
    t.collbench = absolute_if_path(c.collbench);
  } else if (!s.program_dir.empty() && fs::exists(s.program_dir / "collbench")) {
    t.collbench = (s.program_dir / "collbench").lexically_normal();
  } else {
    t.collbench = "collbench";
  }
  if (!s.sbatch_template.empty()) {
    t.sbatch_template = fs::absolute(s.sbatch_template).lexically_normal();
  } else {
    // build/collbench-sweep next to slurm/ in a checkout; else the current directory's slurm/.
    const auto beside = s.program_dir / ".." / "slurm" / "collbench.sbatch";
    t.sbatch_template = fs::absolute(!s.program_dir.empty() && fs::exists(beside)
                                         ? beside
                                         : fs::path("slurm/collbench.sbatch"))
                            .lexically_normal();
  }
  t.mpirun = s.mpirun;
  return t;
}

}  // namespace

Session open_session(const SweepSettings& s, Scope scope) {
  Session session;
  session.campaign = load_campaign(s.campaign_file, s.rules);
  session.paths = campaign_paths(session.campaign, s.results_root);
  session.manifest = Manifest(session.paths.manifest());
  session.tools = resolve_tools(s, session.campaign);
  check_outputs_apart_from_inputs(session.campaign, session.paths, session.tools);
  auto local = expand_matrix(session.campaign, Where::kLocal);
  auto mark_local = [&] {
    for (const auto& r : session.runs) session.local_runs.insert(r.name);
  };
  if (s.local) {
    session.runs = std::move(local);
    mark_local();
    return session;
  }
  session.runs = expand_matrix(session.campaign, Where::kSlurm);
  if (scope == Scope::kOwn) return session;
  // One view of the campaign's runs, whichever way they ran: local runs have names of their own
  // (the host's instance type for the partition), so they are looked up by their names too.
  const auto records = session.manifest.runs();
  auto recorded = [&](const RunSpec& r, Where where) {
    const RunRecord* record = record_of(records, r.name);
    return record && record->where == where;
  };
  const bool any_slurm = std::any_of(session.runs.begin(), session.runs.end(),
                                     [&](const RunSpec& r) { return recorded(r, Where::kSlurm); });
  const bool any_local = std::any_of(local.begin(), local.end(),
                                     [&](const RunSpec& r) { return recorded(r, Where::kLocal); });
  if (any_local && !any_slurm) {
    session.runs = std::move(local);
    mark_local();
    return session;
  }
  std::set<std::string> names;
  for (const auto& r : session.runs) names.insert(r.name);
  for (auto& r : local) {
    if (recorded(r, Where::kLocal) && !names.count(r.name)) {
      session.local_runs.insert(r.name);
      session.runs.push_back(std::move(r));
    }
  }
  return session;
}

namespace {

// Seconds since the epoch of a manifest time ("2026-12-01T22:04:05.123Z"); nullopt if not one.
std::optional<double> epoch_seconds(const std::string& time) {
  std::tm tm{};
  int ms = 0;
  if (std::sscanf(time.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ", &tm.tm_year, &tm.tm_mon,
                  &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &ms) != 7) {
    return std::nullopt;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<double>(::timegm(&tm)) + ms / 1000.0;
}

// Whether `file` was last written after `time` (a manifest event's).
bool written_after(const fs::path& file, const std::string& time) {
  struct stat st {};
  const auto at = epoch_seconds(time);
  if (!at || ::stat(file.c_str(), &st) != 0) return false;
  return static_cast<double>(st.st_mtim.tv_sec) + st.st_mtim.tv_nsec * 1e-9 >= *at;
}

}  // namespace

Records load_records(const Session& session) {
  Records records = session.manifest.runs();
  for (const auto& run : session.runs) {
    const auto it = records.find(run.name);
    const bool unrecorded = it == records.end() || it->second.state == RunRecord::State::kNone;
    const fs::path file = session.paths.collected(run.name);
    // Started or submitted, and its results file written since: collecting wrote the file and
    // the manifest lost the event that followed (a crash, a cut last line).
    const bool event_lost = !unrecorded &&
                            (it->second.state == RunRecord::State::kStarted ||
                             it->second.state == RunRecord::State::kSubmitted) &&
                            written_after(file, it->second.last.time);
    if (!unrecorded && !event_lost) continue;
    if (!holds_collected_results(file, session.campaign.name, run.name)) continue;
    RunRecord& r = records[run.name];
    r.state = RunRecord::State::kCollected;
    r.where = where_of(session, run);
    r.found_on_disk = true;
    r.launch.reset();
  }
  return records;
}

Where where_of(const Session& session, const RunSpec& run) {
  return session.local_runs.count(run.name) ? Where::kLocal : Where::kSlurm;
}

Standing standing_of(const Session& session, const Records& records, const RunSpec& run) {
  Standing st;
  const RunRecord* r = record_of(records, run.name);
  if (!r) return st;
  st.state = r->state;
  if (r->definition) {
    st.changed = describe_change(*r->definition,
                                 run_definition(session.campaign, run, where_of(session, run)));
  }
  st.lost =
      r->state == RunRecord::State::kCollected && !fs::exists(session.paths.collected(run.name));
  // A launch can outlive the collbench-sweep that started it: one killed before it recorded an end
  // (started), or one that lost its supervisor and recorded the run failed while the launch, in a
  // session of its own, ran on.
  if ((r->state == RunRecord::State::kStarted || r->state == RunRecord::State::kFailed) &&
      r->launch) {
    st.live = launch_processes(*r->launch);
  }
  return st;
}

int done_count(const Session& session, const Records& records) {
  int n = 0;
  for (const auto& run : session.runs) n += standing_of(session, records, run).done() ? 1 : 0;
  return n;
}

std::string stale_reason(const Session& session, const Standing& standing, const RunSpec& run) {
  if (!standing.changed.empty()) {
    return fmt::format("{} changed since this run was {}: {}", session.campaign.file.string(),
                       where_of(session, run) == Where::kLocal ? "started" : "submitted",
                       standing.changed);
  }
  if (standing.lost) {
    return fmt::format("its results file {} was deleted",
                       session.paths.collected(run.name).string());
  }
  return "";
}

void print(const SweepSettings& s, const std::string& line) {
  std::fprintf(s.out, "%s\n", line.c_str());
  std::fflush(s.out);
}

ManifestLock lock_manifest(const Session& session, const SweepSettings& s) {
  return session.manifest.lock(s.lock_timeout_s, [&] {
    print(s, fmt::format("waiting for another collbench-sweep using {}",
                         session.manifest.path().string()));
  });
}

void check_collbench_exists(const Tools& tools) {
  if (!find_program(tools.collbench.string())) {
    throw_usage(
        "collbench binary '{}' not found; build it (cmake --build build --target collbench) "
        "or pass --collbench PATH",
        tools.collbench.string());
  }
}

void copy_campaign(const Session& session) {
  write_file_atomic(session.paths.campaign_copy(), read_file(session.campaign.file).value_or(""),
                    0644);
}

const RunRecord* record_of(const Records& records, const std::string& run) {
  const auto it = records.find(run);
  return it == records.end() ? nullptr : &it->second;
}

RunRecord::State state_of(const Records& records, const std::string& run) {
  const RunRecord* r = record_of(records, run);
  return r ? r->state : RunRecord::State::kNone;
}

std::map<RunRecord::State, int> tally(const Records& records, const std::vector<RunSpec>& runs) {
  std::map<RunRecord::State, int> counts;
  for (const auto& run : runs) ++counts[state_of(records, run.name)];
  return counts;
}

int failure_exit_code(const Records& records, const std::vector<RunSpec>& runs) {
  bool runtime = false, wrong = false;
  for (const auto& run : runs) {
    const RunRecord* r = record_of(records, run.name);
    if (!r || r->state != RunRecord::State::kFailed) continue;
    const auto kind = r->failure.value_or(FailureKind::kNonZeroExit);
    (exit_code_of(kind) == ExitCode::kRuntime ? runtime : wrong) = true;
  }
  if (runtime) return exit_status(ExitCode::kRuntime);
  return exit_status(wrong ? ExitCode::kCheckFailed : ExitCode::kOk);
}

}  // namespace collbench::sweep
