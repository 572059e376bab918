#include "collbench/sweep/commands.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "collbench/error.h"
#include "collbench/sizes.h"
#include "collbench/sweep/collect.h"
#include "collbench/sweep/partition_limits.h"
#include "collbench/sweep/placement.h"
#include "collbench/sweep/process.h"
#include "collbench/sweep/progress.h"
#include "collbench/sweep/slurm.h"
#include "files.h"
#include "session.h"

namespace collbench::sweep {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using State = RunRecord::State;

// What Slurm said about each partition of the campaign (nullopt: it could not tell).
using PartitionAnswers = std::map<std::string, std::optional<PartitionLimits>>;

// What only a Slurm submission needs: the template, site env files, partition limits.
PartitionAnswers check_for_slurm(const Session& session, bool strict) {
  const auto& c = session.campaign;
  if (strict && !fs::exists(session.tools.sbatch_template)) {
    throw_usage(
        "sbatch template {} not found; run from the collbench checkout or pass --template "
        "slurm/collbench.sbatch",
        session.tools.sbatch_template.string());
  }
  if (session.paths.root.string().find('%') != std::string::npos) {
    throw_usage(
        "the results directory {} contains '%', which Slurm reads as a file-name pattern; "
        "choose another --results",
        session.paths.root.string());
  }
  for (const auto& p : c.partitions) {
    const auto env = resolve_site_env(p, c, session.tools);
    if (!env.empty() && !fs::exists(env)) {
      throw_usage(
          "{}: site_env '{}' of partition '{}' is {}, which does not exist; name a file of "
          "slurm/env (aws-p5, aws-p4d, aws-g5, generic-ib, tcp-only) or give a path relative to "
          "the campaign file",
          p.mark.str(), p.site_env, p.label(), env.string());
    }
  }
  Slurm slurm;
  PartitionAnswers answers;
  check_partition_limits(
      c, [&](const std::string& name) { return answers[name] = slurm.partition(name); });
  return answers;
}

// Checks every run's placement against the network's tree and chooses the hosts of the
// placement: across runs (plan and submit). The tree is read when a run asks for a placement,
// and a topology file always, so that a mistake in it shows before anything is submitted rather
// than at collect; nullopt when it was not read.
std::optional<NetworkTopology> place_session_runs(Session& session,
                                                  const PartitionAnswers& answers) {
  const auto& c = session.campaign;
  const bool placed = std::any_of(session.runs.begin(), session.runs.end(), [](const RunSpec& r) {
    return r.placement != NodePlacement::kAny;
  });
  if (!placed && c.topology.kind != TopologySource::Kind::kFile) return std::nullopt;
  auto topology = campaign_topology(c, [] { return Slurm().topology(); });
  if (!topology) return std::nullopt;
  place_runs(c, session.runs, *topology,
             [&](const std::string& partition) -> std::optional<std::vector<std::string>> {
               const auto it = answers.find(partition);
               if (it == answers.end() || !it->second || it->second->hosts.empty())
                 return std::nullopt;
               return it->second->hosts;
             });
  return topology;
}

// The placement labels of collected Slurm runs, from the campaign's tree (read when the first
// run is collected), and the hosts the tree did not place, said once at the end.
class PlacementLabels {
 public:
  explicit PlacementLabels(const Session& session) : session_(session) {}

  // The labels of `run`, collected from `raw`.
  RunLabels of(const RunSpec& run, const fs::path& raw) {
    RunLabels labels = run_labels(session_.campaign, run);
    // Local runs share one host, which the cluster's tree does not describe.
    if (session_.campaign.topology.kind == TopologySource::Kind::kNone ||
        where_of(session_, run) == Where::kLocal) {
      return labels;
    }
    if (!topology_) {
      topology_ = campaign_topology(session_.campaign, [] { return Slurm().topology(); });
    }
    const auto hosts = context_hosts(raw);
    std::vector<std::string> names;
    for (const auto& h : hosts) names.push_back(h.name);
    // EC2's tree names instances: the context says which host each one is.
    NetworkTopology tree = *topology_;
    tree.rename_hosts(hosts_by_instance(hosts));
    const LandedPlacement landed = landed_placement(tree, names);
    labels.placement = landed.label();
    if (!landed.level) ++unknown_;
    missing_.insert(landed.missing.begin(), landed.missing.end());
    return labels;
  }

  // One line on the runs labelled unknown and the hosts behind it, or "".
  std::string summary() const {
    if (unknown_ == 0) return "";
    const std::string runs = fmt::format("{} run{}", unknown_, unknown_ == 1 ? "" : "s");
    if (missing_.empty()) {
      return fmt::format(
          "placement: {} labelled unknown: their hosts share no switch in {} (or "
          "their results name no host)",
          runs, topology_->source);
    }
    return fmt::format(
        "placement: {} labelled unknown: {} does not place {}; add them to the "
        "topology to label where those runs ran",
        runs, topology_->source, fmt::join(missing_, ", "));
  }

 private:
  const Session& session_;
  std::optional<NetworkTopology> topology_;
  std::set<std::string> missing_;
  int unknown_ = 0;
};

// The Slurm view of every submitted run.
std::map<std::string, JobState> query_submitted(const Records& records) {
  std::vector<std::string> ids;
  for (const auto& [name, r] : records) {
    if (r.state == State::kSubmitted && !r.job_id.empty()) ids.push_back(r.job_id);
  }
  return Slurm().query(ids);
}

Outcome outcome_of(const RunRecord& r, const std::map<std::string, JobState>& jobs) {
  std::optional<JobState> job;
  if (auto it = jobs.find(r.job_id); it != jobs.end()) job = it->second;
  return job_outcome(job, JobFiles{r.last.output, r.last.raw_jsonl});
}

// The event that records a submitted run's failed job.
ManifestEvent job_failed_event(const std::string& run, const RunRecord& r, const Outcome& o) {
  ManifestEvent e(EventKind::kFailed, run);
  e.job_id = r.job_id;
  e.reason = o.detail;
  e.failure = o.failure;
  return e;
}

std::string describe_sizes(const MeasureRequest& o) {
  if (!o.min_bytes) return "collbench's default sizes";
  std::string step = o.step_factor ? fmt::format("×{}", *o.step_factor)
                                   : fmt::format("+{}", format_bytes(o.step_bytes.value_or(0)));
  return fmt::format("{}..{} {}", format_bytes(*o.min_bytes), format_bytes(*o.max_bytes), step);
}

// The display state of a run: unsubmitted, pending, running, done, failed, interrupted.
struct RunStatus {
  std::string state;
  std::string job_id;
  std::string detail;
};

RunStatus status_of(const Session& session, const Records& records, const RunSpec& run,
                    const std::map<std::string, JobState>& jobs, bool busy) {
  const RunRecord* r = record_of(records, run.name);
  if (!r || r->state == State::kNone) return {"unsubmitted", "", ""};
  const Standing st = standing_of(session, records, run);
  const bool local = where_of(session, run) == Where::kLocal;
  const std::string again =
      local ? "run --local again to measure it again" : "submit again to measure it again";
  if (st.stale() && r->state != State::kSubmitted && st.live.empty()) {
    return {st.lost ? "lost" : "changed", r->job_id,
            fmt::format("{}; {}", stale_reason(session, st, run), again)};
  }
  switch (r->state) {
    case State::kCollected:
      return {"done", r->job_id,
              fmt::format("collected: {}{}", session.paths.collected(run.name).filename().string(),
                          r->found_on_disk ? " (found on disk; the manifest had lost it)" : "")};
    case State::kFailed:
      if (!st.live.empty()) {
        return {"running", "",
                fmt::format("local run in progress (mpirun pid {}), recorded failed by a "
                            "collbench-sweep that lost its supervisor: {}",
                            r->launch->pid, r->reason)};
      }
      return {"failed", r->job_id, r->reason};
    case State::kStarted:
      if (!st.live.empty()) {
        return {"running", "",
                fmt::format("local run in progress (mpirun pid {})", r->launch->pid)};
      }
      if (busy) return {"running", "", "local run in progress"};
      return {"interrupted", "", "a local run started it and did not finish; run --local again"};
    case State::kSubmitted: {
      const Outcome o = outcome_of(*r, jobs);
      const std::string note =
          st.changed.empty() ? "" : fmt::format(" ({}; {})", stale_reason(session, st, run), again);
      switch (o.kind) {
        case Outcome::Kind::kWaiting:
          return {"pending", r->job_id, o.detail + note};
        case Outcome::Kind::kRunning:
          return {"running", r->job_id, o.detail + note};
        case Outcome::Kind::kSucceeded:
          return {"done", r->job_id, "finished, not collected yet: run collect" + note};
        case Outcome::Kind::kFailed:
          return {"failed", r->job_id, o.detail + note};
      }
      break;
    }
    default:
      break;
  }
  return {"unsubmitted", "", ""};
}

// The runs a submit sends, and what it leaves alone.
struct SubmitPlan {
  std::vector<const RunSpec*> todo;
  int done = 0;
  int in_flight = 0;
  int failed_skipped = 0;
};

SubmitPlan choose_runs_to_submit(const Session& session, const SweepSettings& s,
                                 const SubmitSettings& opt, const Records& records) {
  std::map<std::string, JobState> jobs;
  if (opt.retry_failed) jobs = query_submitted(records);
  SubmitPlan plan;
  for (const auto& run : session.runs) {
    const RunRecord* r = record_of(records, run.name);
    const State state = r ? r->state : State::kNone;
    const Standing st = standing_of(session, records, run);
    if (state == State::kSubmitted && !st.changed.empty()) {
      // Its job measures what the campaign said then: collecting it shows it as changed, and
      // the next submit measures the run as it is now.
      ++plan.in_flight;
      print(s, fmt::format("{}: {}; job {} measures the old definition: collect it (or scancel "
                           "{}), then submit again",
                           run.name, stale_reason(session, st, run), r->job_id, r->job_id));
      continue;
    }
    if (state == State::kNone) {
      plan.todo.push_back(&run);
    } else if (st.stale()) {
      print(s,
            fmt::format("{}: {}; submitting it again", run.name, stale_reason(session, st, run)));
      plan.todo.push_back(&run);
    } else if (state == State::kCollected) {
      ++plan.done;
    } else if (state == State::kSubmitted) {
      const Outcome o = opt.retry_failed ? outcome_of(*r, jobs) : Outcome{};
      if (o.kind != Outcome::Kind::kFailed) {
        ++plan.in_flight;
        continue;
      }
      // Record the failure before resubmitting so the manifest keeps the history.
      if (!opt.dry_run) session.manifest.append(job_failed_event(run.name, *r, o));
      print(s,
            fmt::format("{}: job {} failed ({}); submitting again", run.name, r->job_id, o.detail));
      plan.todo.push_back(&run);
    } else if (opt.retry_failed) {
      plan.todo.push_back(&run);  // failed, or started by an interrupted local run
    } else {
      ++plan.failed_skipped;
    }
  }
  return plan;
}

// One submission per run, or one job array per group of runs that differ only in repeat.
std::vector<std::vector<const RunSpec*>> group_submissions(const std::vector<const RunSpec*>& todo,
                                                           bool array) {
  std::vector<std::vector<const RunSpec*>> groups;
  std::map<std::string, std::size_t> index;
  for (const auto* run : todo) {
    if (!array) {
      groups.push_back({run});
      continue;
    }
    auto [it, inserted] = index.emplace(base_name(*run), groups.size());
    if (inserted) groups.emplace_back();
    groups[it->second].push_back(run);
  }
  return groups;
}

// Records the runs of a submission Slurm accepted as `job_id`.
void record_submitted(const Session& session, const SweepSettings& s, const Submission& sub,
                      const std::string& job_id) {
  for (std::size_t i = 0; i < sub.runs.size(); ++i) {
    const RunSpec& run = *sub.runs[i];
    const std::string id = sub.job_id_of(i, job_id);
    const JobPaths p = sub.paths(i, job_id);
    ManifestEvent e(EventKind::kSubmitted, run.name);
    e.job_id = id;
    e.output = p.output.string();
    e.raw_jsonl = p.raw_jsonl.string();
    e.env_file = session.paths.env_file(run.name).string();
    e.command = sub.command.argv;
    e.labels = run_labels(session.campaign, run);
    e.definition = run_definition(session.campaign, run, Where::kSlurm);
    session.manifest.append(std::move(e));
    print(s, fmt::format("submitted {} as job {}", run.name, id));
  }
}

}  // namespace

int plan(const SweepSettings& s) {
  Session session = open_session(s);
  const auto& c = session.campaign;
  if (s.local) refuse_local_placement(c);
  std::optional<NetworkTopology> topology;
  if (!s.local) topology = place_session_runs(session, check_for_slurm(session, false));
  const auto records = load_records(session);
  print(s, fmt::format("campaign {} ({}): {} runs, results in {}", c.name, c.file.string(),
                       session.runs.size(), session.paths.root.string()));
  if (!c.description.empty()) print(s, "  " + c.description);
  print(s, fmt::format("  tests {} · sizes {} · backend {} · {}", fmt::join(c.tests, ","),
                       describe_sizes(c.request), c.backend,
                       s.local ? "local mpirun" : "launcher " + c.launcher));
  if (topology) {
    print(s,
          fmt::format("  topology {} ({} hosts) · placement {} · switch_wait {}", topology->source,
                      topology->uplinks.size(), placement_name(c.placement), c.switch_wait));
  }
  print(s, "");
  print(s, fmt::format("{:<36} {:<12} {:<16} {:>5} {:>10} {:<14} {:>6}  {}", "RUN", "PARTITION",
                       "INSTANCE", "NODES", "TASKS/NODE", "VARIANT", "REPEAT", "MANIFEST"));
  for (const auto& r : session.runs) {
    const RunRecord* record = record_of(records, r.name);
    const Standing st = standing_of(session, records, r);
    std::string state(record ? name(record->state) : "unsubmitted");
    if (record && st.stale()) state = st.lost ? "lost" : "changed";
    print(s, fmt::format("{:<36} {:<12} {:<16} {:>5} {:>10} {:<14} {:>6}  {}", r.name,
                         r.partition_label, r.instance_type.empty() ? "-" : r.instance_type,
                         r.nodes, r.tasks_per_node, r.variant, r.repeat, state));
  }
  print(s, "");
  for (const auto& r : session.runs) {
    print(s, r.name + ":");
    if (s.local) {
      const auto dir = session.paths.local_dir(r.name, 1);
      if (c.doctor != DoctorMode::kOff) {
        print(s, "  " + doctor_command(c.doctor, r, session.tools, dir / "doctor.json").display());
      }
      const auto jsonl = dir / "collbench.jsonl.raw";
      print(s, "  " + mpirun_command(r, session.tools, jsonl, usable_cores()).display());
    } else {
      const auto sub = sbatch_submission(c, {&r}, session.paths, session.tools, false);
      print(s, "  " + sub.command.display());
      if (topology && r.placement != NodePlacement::kAny)
        print(s, "  " + describe_placement(c, r, *topology));
      if (!r.env.empty()) {
        std::string env;
        for (const auto& e : r.env) {
          env += e.value ? fmt::format(" {}={}", e.name, shell_quote(*e.value))
                         : fmt::format(" unset {}", e.name);
        }
        print(s, "  environment file" + env);
      }
    }
  }
  return 0;
}

int submit(const SweepSettings& s, const SubmitSettings& opt) {
  Session session = open_session(s);
  const auto& c = session.campaign;
  if (s.local)
    throw_usage("submit sends runs to Slurm; for local runs use `collbench-sweep run --local`");
  place_session_runs(session, check_for_slurm(session, true));
  if (!opt.dry_run) check_collbench_exists(session.tools);

  std::optional<ManifestLock> lock;
  if (!opt.dry_run) lock.emplace(lock_manifest(session, s));
  // Read only once the lock is held: a submit that waited sees what the other one submitted.
  const SubmitPlan plan = choose_runs_to_submit(session, s, opt, load_records(session));
  if (!opt.dry_run && !plan.todo.empty()) copy_campaign(session);
  int submitted = 0;
  for (const auto& group : group_submissions(plan.todo, opt.array)) {
    const bool array = opt.array && group.size() > 1;
    const Submission sub = sbatch_submission(c, group, session.paths, session.tools, array);
    const std::string what =
        array ? fmt::format("{} runs {}..{}", group.size(), group.front()->name, group.back()->name)
              : group.front()->name;
    if (opt.dry_run) {
      print(s, fmt::format("would submit {}: {}", what, sub.command.display()));
      submitted += static_cast<int>(group.size());
      continue;
    }
    for (const auto* run : group)
      write_file_atomic(session.paths.env_file(run->name), encode_env_file(run->env), 0600);
    std::string job_id;
    try {
      job_id =
          Slurm().submit(sub.command.argv, apply_env(current_environment(), sub.command.env), what);
    } catch (const Error& e) {
      // This run's manifest stays as it was; earlier submissions of this command are recorded.
      // The error goes to stderr, with main's other errors.
      if (submitted == 0) throw;
      throw Error(e.code(), fmt::format("{} ({} runs were submitted before the error and are "
                                        "recorded)",
                                        e.what(), submitted));
    }
    record_submitted(session, s, sub, job_id);
    submitted += static_cast<int>(group.size());
  }
  std::string summary =
      fmt::format("{}: {} {}submitted", c.name, submitted, opt.dry_run ? "would be " : "");
  if (plan.done) summary += fmt::format(", {} already done", plan.done);
  if (plan.in_flight) summary += fmt::format(", {} already submitted", plan.in_flight);
  if (plan.failed_skipped)
    summary += fmt::format(", {} failed skipped (pass --retry-failed to submit them again)",
                           plan.failed_skipped);
  print(s, summary);
  return 0;
}

int status(const SweepSettings& s, bool json) {
  const Session session = open_session(s, Scope::kRecorded);
  const auto records = load_records(session);
  std::map<std::string, JobState> jobs;
  if (!s.local) jobs = query_submitted(records);
  const bool busy = locked_elsewhere(session.manifest.path());
  std::map<std::string, int> counts{
      {"unsubmitted", 0}, {"pending", 0}, {"running", 0}, {"done", 0}, {"failed", 0}};
  nlohmann::json rows = nlohmann::json::array();
  std::vector<RunStatus> statuses;
  for (const auto& run : session.runs) {
    const RunRecord* record = record_of(records, run.name);
    const RunStatus st = status_of(session, records, run, jobs, busy);
    ++counts[st.state];
    statuses.push_back(st);
    rows.push_back({{"run", run.name},
                    {"state", st.state},
                    {"job_id", st.job_id},
                    {"detail", st.detail},
                    {"collected", record && record->state == State::kCollected},
                    {"mode", enum_name(where_of(session, run))}});
  }
  if (json) {
    nlohmann::json j{{"campaign", session.campaign.name},
                     {"results", session.paths.root.string()},
                     {"total", session.runs.size()},
                     {"counts", counts},
                     {"runs", rows}};
    print(s, j.dump(2));
    return 0;
  }
  std::string line = fmt::format("{}: {} runs", session.campaign.name, session.runs.size());
  const std::set<std::string> shown_when_any{"interrupted", "changed", "lost"};
  for (const std::string key :
       {"done", "running", "pending", "failed", "unsubmitted", "interrupted", "changed", "lost"}) {
    if (counts[key] || !shown_when_any.contains(key))
      line += fmt::format(" · {} {}", counts[key], key);
  }
  print(s, line);
  print(s, fmt::format("{:<36} {:<12} {:<10} {}", "RUN", "STATE", "JOB", "DETAIL"));
  for (std::size_t i = 0; i < session.runs.size(); ++i) {
    print(s,
          fmt::format("{:<36} {:<12} {:<10} {}", session.runs[i].name, statuses[i].state,
                      statuses[i].job_id.empty() ? "-" : statuses[i].job_id, statuses[i].detail));
  }
  return 0;
}

int wait(const SweepSettings& s, const WaitSettings& w) {
  const Session session = open_session(s, Scope::kRecorded);
  const auto start = Clock::now();
  const int total = static_cast<int>(session.runs.size()) -
                    tally(load_records(session), session.runs)[State::kNone];
  if (total > 0 && session.local_runs.size() == session.runs.size()) {
    print(s, fmt::format("{}: nothing was submitted to Slurm; its runs ran locally (see status)",
                         session.campaign.name));
    return 0;
  }
  if (total == 0) {
    throw_usage("{}: nothing submitted yet; run submit first", session.campaign.name);
  }
  std::optional<Progress> progress;
  while (true) {
    const auto records = load_records(session);
    const auto jobs = query_submitted(records);
    int waiting = 0, running = 0;
    for (const auto& run : session.runs) {
      const RunRecord* r = record_of(records, run.name);
      if (!r || r->state != State::kSubmitted) continue;
      auto job = jobs.find(r->job_id);
      if (job == jobs.end()) continue;
      const JobPhase phase = phase_of(job->second.state);
      if (phase == JobPhase::kWaiting) ++waiting;
      if (phase == JobPhase::kRunning) ++running;
    }
    if (!progress) progress.emplace(s.out, s.tty, total, total - waiting - running);
    progress->set_counts(total - waiting - running,
                         fmt::format("{} running, {} pending", running, waiting));
    if (waiting + running == 0) break;
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    if (w.timeout_s > 0 && elapsed > w.timeout_s) {
      progress.reset();
      throw_runtime("{}: still {} running and {} pending after {:.0f} s (--timeout {})",
                    session.campaign.name, running, waiting, elapsed, w.timeout_s);
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(w.interval_s));
  }
  progress.reset();
  print(s, fmt::format("{}: every submitted job has ended; run collect", session.campaign.name));
  return 0;
}

// A collected run whose results file was deleted gets it again from the raw results its job or
// local attempt left, when they are still there. Returns whether it did.
bool restore_collected(const Session& session, const SweepSettings& s, const RunSpec& run,
                       const RunRecord& r, PlacementLabels& placement) {
  const auto dest = session.paths.collected(run.name);
  const auto found = r.raw_jsonl.empty() ? std::nullopt : summarize_results(r.raw_jsonl);
  if (!found || found->results == 0) {
    print(s, fmt::format("{}: its results file {} was deleted and its raw results are gone; {} "
                         "again to measure it",
                         run.name, dest.string(),
                         where_of(session, run) == Where::kLocal ? "run --local" : "submit"));
    return false;
  }
  const auto summary =
      write_labelled(r.raw_jsonl, dest, json_value(placement.of(run, r.raw_jsonl)));
  ManifestEvent e(EventKind::kCollected, run.name);
  e.job_id = r.job_id;
  e.attempt = r.last.attempt;
  e.file = dest.filename().string();
  e.results = summary.results;
  e.wrong = summary.wrong;
  e.bad_lines = summary.bad_lines;
  session.manifest.append(std::move(e));
  print(s, fmt::format("restored {}: its results file was deleted; {} result rows from {}",
                       run.name, summary.results, r.raw_jsonl));
  return true;
}

int collect(const SweepSettings& s) {
  const Session session = open_session(s, Scope::kRecorded);
  const auto& c = session.campaign;
  const auto lock = lock_manifest(session, s);
  auto records = load_records(session);
  const auto jobs = query_submitted(records);
  int collected = 0, failed = 0, waiting = 0;
  PlacementLabels placement(session);
  for (const auto& run : session.runs) {
    const RunRecord* r = record_of(records, run.name);
    if (r && r->state == State::kCollected && !fs::exists(session.paths.collected(run.name))) {
      collected += restore_collected(session, s, run, *r, placement) ? 1 : 0;
      continue;
    }
    if (!r || r->state != State::kSubmitted) continue;
    const Outcome o = outcome_of(*r, jobs);
    if (o.kind == Outcome::Kind::kWaiting || o.kind == Outcome::Kind::kRunning) {
      ++waiting;
      continue;
    }
    if (o.kind == Outcome::Kind::kSucceeded) {
      const auto dest = session.paths.collected(run.name);
      const RunLabels labels = placement.of(run, o.raw_jsonl);
      const auto summary = write_labelled(o.raw_jsonl, dest, json_value(labels));
      ManifestEvent e(EventKind::kCollected, run.name);
      e.job_id = r->job_id;
      e.file = dest.filename().string();
      e.results = summary.results;
      e.wrong = summary.wrong;
      e.bad_lines = summary.bad_lines;
      session.manifest.append(std::move(e));
      // The job's doctor report (COLLBENCH_DOCTOR) lies beside its results.
      const auto doctor = o.raw_jsonl.parent_path() / "doctor.json";
      print(s, fmt::format("collected {} (job {}): {} result rows -> {}{}{}", run.name, r->job_id,
                           summary.results, dest.string(),
                           labels.placement.empty() ? "" : "; placement " + labels.placement,
                           fs::exists(doctor) ? "; doctor report: " + doctor.string() : ""));
      ++collected;
    } else {
      session.manifest.append(job_failed_event(run.name, *r, o));
      print(s, fmt::format("failed {} (job {}): {}", run.name, r->job_id, o.detail));
      ++failed;
    }
  }
  if (const auto line = placement.summary(); !line.empty()) print(s, line);
  records = load_records(session);
  auto counts = tally(records, session.runs);
  int stale = 0;
  for (const auto& run : session.runs) {
    const Standing st = standing_of(session, records, run);
    if (st.stale() && st.state != State::kNone && st.state != State::kSubmitted) ++stale;
  }
  print(s, fmt::format(
               "{}: collected {} now, {} failed now; campaign: {} of {} done, {} failed, {} still "
               "pending or running",
               c.name, collected, failed, done_count(session, records), session.runs.size(),
               counts[State::kFailed], waiting));
  if (stale) {
    print(s, fmt::format("{} runs no longer match {} or lost their results (see status); "
                         "measure them again with: collbench-sweep {} {}",
                         stale, s.campaign_file.string(),
                         session.local_runs.empty() ? "submit" : "run --local",
                         s.campaign_file.string()));
  }
  if (counts[State::kFailed])
    print(s, "resubmit failed runs with: collbench-sweep submit --retry-failed " +
                 s.campaign_file.string());
  return failure_exit_code(records, session.runs);
}

int run_slurm(const SweepSettings& s, const SubmitSettings& sub, const WaitSettings& w) {
  if (const int rc = submit(s, sub); rc != 0 || sub.dry_run) return rc;
  if (const int rc = wait(s, w); rc != 0) return rc;
  return collect(s);
}

int run_command(const SweepCommand& command) {
  const auto& s = command.settings;
  switch (command.subcommand) {
    case Subcommand::kPlan:
      return plan(s);
    case Subcommand::kSubmit:
      return submit(s, command.submit);
    case Subcommand::kStatus:
      return status(s, command.json);
    case Subcommand::kWait:
      return wait(s, command.wait);
    case Subcommand::kCollect:
      return collect(s);
    case Subcommand::kRun:
      return s.local ? run_local(s, command.local) : run_slurm(s, command.submit, command.wait);
    case Subcommand::kHunt:
      return run_hunt(command.hunt);
  }
  return exit_status(ExitCode::kUsage);
}

}  // namespace collbench::sweep
