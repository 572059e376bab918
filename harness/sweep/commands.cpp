#include "collbench/sweep/commands.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>

#include "collbench/error.h"
#include "collbench/sizes.h"
#include "collbench/sweep/collect.h"
#include "collbench/sweep/launch.h"
#include "collbench/sweep/manifest.h"
#include "collbench/sweep/matrix.h"
#include "collbench/sweep/process.h"
#include "collbench/sweep/progress.h"
#include "collbench/sweep/slurm.h"

namespace collbench::sweep {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using State = RunRecord::State;

struct Session {
  Campaign campaign;
  std::vector<RunSpec> runs;
  CampaignPaths paths;
  Manifest manifest{fs::path()};
  Tools tools;
};

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

Session open_session(const SweepSettings& s) {
  Session session;
  session.campaign = load_campaign(s.campaign_file, s.rules);
  session.runs = expand_matrix(session.campaign, s.local ? Where::kLocal : Where::kSlurm);
  session.paths = campaign_paths(session.campaign, s.results_root);
  session.manifest = Manifest(session.paths.manifest());
  session.tools = resolve_tools(s, session.campaign);
  return session;
}

void print(const SweepSettings& s, const std::string& line) {
  std::fprintf(s.out, "%s\n", line.c_str());
  std::fflush(s.out);
}

void check_collbench_exists(const Tools& tools) {
  if (!find_program(tools.collbench.string())) {
    throw_usage(
        "collbench binary '{}' not found; build it (cmake --build build --target collbench) "
        "or pass --collbench PATH",
        tools.collbench.string());
  }
}

// What only a Slurm submission needs: the template, site env files, partition limits.
void check_for_slurm(const Session& session, bool strict) {
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
      throw Error(
          ExitCode::kUsage,
          fmt::format("{}: site_env '{}' of partition '{}' is {}, which does not exist; name "
                      "a file of slurm/env (aws-p5, aws-p4d, aws-g5, generic-ib, tcp-only) "
                      "or give a path relative to the campaign file",
                      p.mark.str(), p.site_env, p.label(), env.string()));
    }
  }
  Slurm slurm;
  check_partition_limits(c, [&](const std::string& name) { return slurm.partition(name); });
}

void write_file_atomic(const fs::path& file, const std::string& bytes, int mode) {
  fs::create_directories(file.parent_path());
  const auto tmp =
      file.parent_path() / fmt::format(".{}.{}.tmp", file.filename().string(), ::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) throw_runtime("cannot write {}: {}", tmp.string(), std::strerror(errno));
  const ssize_t n = ::write(fd, bytes.data(), bytes.size());
  ::close(fd);
  if (n != static_cast<ssize_t>(bytes.size())) throw_runtime("cannot write {}", tmp.string());
  fs::rename(tmp, file);
}

void copy_campaign(const Session& session) {
  std::ifstream in(session.campaign.file, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  write_file_atomic(session.paths.campaign_copy(), text, 0644);
}

// The Slurm view of every submitted run.
std::map<std::string, JobState> query_submitted(const std::map<std::string, RunRecord>& records) {
  std::vector<std::string> ids;
  for (const auto& [name, r] : records) {
    if (r.state == State::kSubmitted && !r.job_id.empty()) ids.push_back(r.job_id);
  }
  return Slurm().query(ids);
}

Outcome outcome_of(const RunRecord& r, const std::map<std::string, JobState>& jobs) {
  std::optional<JobState> job;
  if (auto it = jobs.find(r.job_id); it != jobs.end()) job = it->second;
  const JobFiles files{r.last.value("output", ""), r.last.value("raw_jsonl", "")};
  return job_outcome(job, files);
}

std::string describe_sizes(const MeasureOptions& o) {
  if (!o.min_bytes) return "collbench's default sizes";
  std::string step = o.step_factor ? fmt::format("×{}", *o.step_factor)
                                   : fmt::format("+{}", format_bytes(o.step_bytes.value_or(0)));
  return fmt::format("{}..{} {}", format_bytes(*o.min_bytes), format_bytes(*o.max_bytes), step);
}

// True when another process holds the manifest lock (a local run in progress).
bool manifest_busy(const Manifest& m) {
  const int fd = ::open(m.path().c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool busy = ::flock(fd, LOCK_SH | LOCK_NB) != 0;
  ::close(fd);
  return busy;
}

// The display state of a run: unsubmitted, pending, running, done, failed, interrupted.
struct RunStatus {
  std::string state;
  std::string job_id;
  std::string detail;
};

RunStatus status_of(const RunRecord* r, const std::map<std::string, JobState>& jobs, bool busy,
                    const CampaignPaths& paths, const std::string& run) {
  if (!r || r->state == State::kNone) return {"unsubmitted", "", ""};
  switch (r->state) {
    case State::kCollected:
      return {"done", r->job_id,
              fmt::format("collected: {}", paths.collected(run).filename().string())};
    case State::kFailed:
      return {"failed", r->job_id, r->reason};
    case State::kStarted:
      if (busy) return {"running", "", "local run in progress"};
      return {"interrupted", "", "a local run started it and did not finish; run --local again"};
    case State::kSubmitted: {
      const Outcome o = outcome_of(*r, jobs);
      switch (o.kind) {
        case Outcome::Kind::kWaiting:
          return {"pending", r->job_id, o.detail};
        case Outcome::Kind::kRunning:
          return {"running", r->job_id, o.detail};
        case Outcome::Kind::kSucceeded:
          return {"done", r->job_id, "finished, not collected yet: run collect"};
        case Outcome::Kind::kFailed:
          return {"failed", r->job_id, o.detail};
      }
      break;
    }
    default:
      break;
  }
  return {"unsubmitted", "", ""};
}

int failure_exit_code(const std::map<std::string, RunRecord>& records,
                      const std::vector<RunSpec>& runs) {
  bool runtime = false, wrong = false;
  for (const auto& run : runs) {
    auto it = records.find(run.name);
    if (it == records.end() || it->second.state != State::kFailed) continue;
    if (it->second.reason.rfind("wrong results", 0) == 0)
      wrong = true;
    else
      runtime = true;
  }
  if (runtime) return exit_status(ExitCode::kRuntime);
  if (wrong) return exit_status(ExitCode::kCheckFailed);
  return 0;
}

std::string base_of(const RunSpec& run) {
  const std::string suffix = fmt::format("-r{}", run.repeat);
  return run.name.substr(0, run.name.size() - suffix.size());
}

}  // namespace

int plan(const SweepSettings& s) {
  const Session session = open_session(s);
  const auto& c = session.campaign;
  if (!s.local) check_for_slurm(session, false);
  const auto records = session.manifest.runs();
  print(s, fmt::format("campaign {} ({}): {} runs, results in {}", c.name, c.file.string(),
                       session.runs.size(), session.paths.root.string()));
  if (!c.description.empty()) print(s, "  " + c.description);
  std::string tests;
  for (const auto& t : c.tests) tests.append(tests.empty() ? "" : ",").append(t);
  print(s, fmt::format("  tests {} · sizes {} · backend {} · {}", tests, describe_sizes(c.options),
                       c.backend, s.local ? "local mpirun" : "launcher " + c.launcher));
  print(s, "");
  print(s, fmt::format("{:<36} {:<12} {:<16} {:>5} {:>10} {:<14} {:>6}  {}", "RUN", "PARTITION",
                       "INSTANCE", "NODES", "TASKS/NODE", "VARIANT", "REPEAT", "MANIFEST"));
  for (const auto& r : session.runs) {
    auto it = records.find(r.name);
    const std::string state(it == records.end() ? "unsubmitted" : name(it->second.state));
    print(s, fmt::format("{:<36} {:<12} {:<16} {:>5} {:>10} {:<14} {:>6}  {}", r.name,
                         r.partition_label, r.instance_type.empty() ? "-" : r.instance_type,
                         r.nodes, r.tasks_per_node, r.variant, r.repeat, state));
  }
  print(s, "");
  for (const auto& r : session.runs) {
    print(s, r.name + ":");
    if (s.local) {
      const auto jsonl = session.paths.local_dir(r.name, 1) / "collbench.jsonl.raw";
      print(s, "  " + mpirun_command(r, session.tools, jsonl, usable_cores()).display());
    } else {
      const auto sub = sbatch_submission(c, {&r}, session.paths, session.tools, false);
      print(s, "  " + sub.command.display());
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
  const Session session = open_session(s);
  const auto& c = session.campaign;
  if (s.local)
    throw_usage("submit sends runs to Slurm; for local runs use `collbench-sweep run --local`");
  check_for_slurm(session, true);
  if (!opt.dry_run) check_collbench_exists(session.tools);
  Slurm slurm;

  std::optional<ManifestLock> lock;
  if (!opt.dry_run) {
    lock.emplace(session.manifest.lock(s.lock_timeout_s, [&] {
      print(s, fmt::format("waiting for another collbench-sweep using {}",
                           session.manifest.path().string()));
    }));
  }
  // Read only once the lock is held: a submit that waited sees what the other one submitted.
  auto records = session.manifest.runs();
  std::map<std::string, JobState> jobs;
  if (opt.retry_failed) jobs = query_submitted(records);

  std::vector<const RunSpec*> todo;
  int done = 0, in_flight = 0, failed_skipped = 0;
  for (const auto& run : session.runs) {
    auto it = records.find(run.name);
    if (it == records.end() || it->second.state == State::kNone) {
      todo.push_back(&run);
      continue;
    }
    const RunRecord& r = it->second;
    if (r.state == State::kCollected) {
      ++done;
    } else if (r.state == State::kSubmitted) {
      if (opt.retry_failed) {
        const Outcome o = outcome_of(r, jobs);
        if (o.kind == Outcome::Kind::kFailed) {
          // Record the failure before resubmitting so the manifest keeps the history.
          if (!opt.dry_run) {
            session.manifest.append({{"event", "failed"},
                                     {"run", run.name},
                                     {"job_id", r.job_id},
                                     {"reason", o.detail}});
          }
          print(s, fmt::format("{}: job {} failed ({}); submitting again", run.name, r.job_id,
                               o.detail));
          todo.push_back(&run);
          continue;
        }
      }
      ++in_flight;
    } else if (r.state == State::kFailed || r.state == State::kStarted) {
      if (opt.retry_failed)
        todo.push_back(&run);
      else
        ++failed_skipped;
    }
  }

  // Submissions: one per run, or one job array per group of runs that differ only in repeat.
  std::vector<std::vector<const RunSpec*>> groups;
  if (opt.array) {
    std::map<std::string, std::size_t> index;
    for (const auto* run : todo) {
      auto [it, inserted] = index.emplace(base_of(*run), groups.size());
      if (inserted) groups.emplace_back();
      groups[it->second].push_back(run);
    }
  } else {
    for (const auto* run : todo) groups.push_back({run});
  }

  if (!opt.dry_run && !todo.empty()) copy_campaign(session);
  int submitted = 0;
  for (const auto& group : groups) {
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
          slurm.submit(sub.command.argv, apply_env(current_environment(), sub.command.env), what);
    } catch (const Error& e) {
      // This run's manifest stays as it was; earlier submissions of this command are recorded.
      print(s, fmt::format("error: {}", e.what()));
      if (submitted > 0)
        print(s,
              fmt::format("{} runs were submitted before the error and are recorded", submitted));
      return exit_status(e.code());
    }
    for (std::size_t i = 0; i < group.size(); ++i) {
      const auto* run = group[i];
      const std::string id = sub.job_id_of(i, job_id);
      const JobPaths p = sub.paths(i, job_id);
      session.manifest.append({{"event", "submitted"},
                               {"run", run->name},
                               {"job_id", id},
                               {"output", p.output.string()},
                               {"raw_jsonl", p.raw_jsonl.string()},
                               {"env_file", session.paths.env_file(run->name).string()},
                               {"command", sub.command.argv},
                               {"labels", run_labels(c, *run)}});
      print(s, fmt::format("submitted {} as job {}", run->name, id));
      ++submitted;
    }
  }
  std::string summary =
      fmt::format("{}: {} {}submitted", c.name, submitted, opt.dry_run ? "would be " : "");
  if (done) summary += fmt::format(", {} already done", done);
  if (in_flight) summary += fmt::format(", {} already submitted", in_flight);
  if (failed_skipped)
    summary += fmt::format(", {} failed skipped (pass --retry-failed to submit them again)",
                           failed_skipped);
  print(s, summary);
  return 0;
}

int status(const SweepSettings& s, bool json) {
  const Session session = open_session(s);
  const auto records = session.manifest.runs();
  std::map<std::string, JobState> jobs;
  if (!s.local) jobs = query_submitted(records);
  const bool busy = manifest_busy(session.manifest);
  std::map<std::string, int> counts{
      {"unsubmitted", 0}, {"pending", 0}, {"running", 0}, {"done", 0}, {"failed", 0}};
  nlohmann::json rows = nlohmann::json::array();
  std::vector<RunStatus> statuses;
  for (const auto& run : session.runs) {
    auto it = records.find(run.name);
    const RunStatus st =
        status_of(it == records.end() ? nullptr : &it->second, jobs, busy, session.paths, run.name);
    ++counts[st.state];
    statuses.push_back(st);
    rows.push_back({{"run", run.name},
                    {"state", st.state},
                    {"job_id", st.job_id},
                    {"detail", st.detail},
                    {"collected", it != records.end() && it->second.state == State::kCollected}});
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
  for (const auto& key : {"done", "running", "pending", "failed", "unsubmitted", "interrupted"}) {
    if (counts[key] || std::string(key) != "interrupted")
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
  const Session session = open_session(s);
  const auto start = Clock::now();
  auto records = session.manifest.runs();
  int total = 0;
  for (const auto& run : session.runs) {
    auto it = records.find(run.name);
    if (it != records.end() && it->second.state != State::kNone) ++total;
  }
  if (total == 0) {
    print(s, fmt::format("{}: nothing submitted yet; run submit first", session.campaign.name));
    return exit_status(ExitCode::kUsage);
  }
  std::optional<Progress> progress;
  while (true) {
    records = session.manifest.runs();
    const auto jobs = query_submitted(records);
    int waiting = 0, running = 0;
    for (const auto& run : session.runs) {
      auto it = records.find(run.name);
      if (it == records.end() || it->second.state != State::kSubmitted) continue;
      auto job = jobs.find(it->second.job_id);
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
      print(s, fmt::format("{}: still {} running and {} pending after {:.0f} s",
                           session.campaign.name, running, waiting, elapsed));
      return exit_status(ExitCode::kRuntime);
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(w.interval_s));
  }
  progress.reset();
  print(s, fmt::format("{}: every submitted job has ended; run collect", session.campaign.name));
  return 0;
}

int collect(const SweepSettings& s) {
  const Session session = open_session(s);
  const auto& c = session.campaign;
  const auto lock = session.manifest.lock(s.lock_timeout_s, [&] {
    print(s, fmt::format("waiting for another collbench-sweep using {}",
                         session.manifest.path().string()));
  });
  auto records = session.manifest.runs();
  const auto jobs = query_submitted(records);
  int collected = 0, failed = 0, waiting = 0;
  for (const auto& run : session.runs) {
    auto it = records.find(run.name);
    if (it == records.end() || it->second.state != State::kSubmitted) continue;
    const RunRecord& r = it->second;
    const Outcome o = outcome_of(r, jobs);
    if (o.kind == Outcome::Kind::kWaiting || o.kind == Outcome::Kind::kRunning) {
      ++waiting;
      continue;
    }
    if (o.kind == Outcome::Kind::kSucceeded) {
      const auto dest = session.paths.collected(run.name);
      const auto summary = write_labelled(o.raw_jsonl, dest, run_labels(c, run));
      session.manifest.append({{"event", "collected"},
                               {"run", run.name},
                               {"job_id", r.job_id},
                               {"file", dest.filename().string()},
                               {"results", summary.results},
                               {"wrong", summary.wrong},
                               {"bad_lines", summary.bad_lines}});
      print(s, fmt::format("collected {} (job {}): {} result rows -> {}", run.name, r.job_id,
                           summary.results, dest.string()));
      ++collected;
    } else {
      session.manifest.append(
          {{"event", "failed"}, {"run", run.name}, {"job_id", r.job_id}, {"reason", o.detail}});
      print(s, fmt::format("failed {} (job {}): {}", run.name, r.job_id, o.detail));
      ++failed;
    }
  }
  records = session.manifest.runs();
  int failed_total = 0, done_total = 0;
  for (const auto& run : session.runs) {
    auto it = records.find(run.name);
    if (it == records.end()) continue;
    failed_total += it->second.state == State::kFailed;
    done_total += it->second.state == State::kCollected;
  }
  print(s, fmt::format(
               "{}: collected {} now, {} failed now; campaign: {} of {} done, {} failed, {} still "
               "pending or running",
               c.name, collected, failed, done_total, session.runs.size(), failed_total, waiting));
  if (failed_total)
    print(s, "resubmit failed runs with: collbench-sweep submit --retry-failed " +
                 s.campaign_file.string());
  return failure_exit_code(records, session.runs);
}

int run_local(const SweepSettings& s, const LocalSettings& opt) {
  SweepSettings local = s;
  local.local = true;
  const Session session = open_session(local);
  const auto& c = session.campaign;
  check_collbench_exists(session.tools);
  if (!find_program(session.tools.mpirun)) {
    throw_runtime("{} not found on PATH; install Open MPI (scripts/setup) or pass --mpirun PATH",
                  session.tools.mpirun);
  }
  const auto lock = session.manifest.lock(s.lock_timeout_s, [&] {
    print(s, fmt::format("waiting for another collbench-sweep using {}",
                         session.manifest.path().string()));
  });
  auto records = session.manifest.runs();
  std::vector<const RunSpec*> todo;
  int done = 0, failed_skipped = 0;
  for (const auto& run : session.runs) {
    auto it = records.find(run.name);
    const State state = it == records.end() ? State::kNone : it->second.state;
    if (opt.redo || state == State::kNone || state == State::kStarted) {
      // kStarted: an earlier local run was interrupted in this run; it never ended.
      todo.push_back(&run);
    } else if (state == State::kFailed) {
      if (opt.retry_failed)
        todo.push_back(&run);
      else
        ++failed_skipped;
    } else {
      ++done;
    }
  }
  if (!todo.empty()) copy_campaign(session);
  const int cores = usable_cores();
  const double limit = c.time_limit.empty() ? 0 : parse_slurm_time(c.time_limit).value_or(0);
  print(s, fmt::format("{}: {} runs, {} to do, results in {}", c.name, session.runs.size(),
                       todo.size(), session.paths.root.string()));
  {
    Progress progress(s.out, s.tty, static_cast<int>(session.runs.size()) - failed_skipped, done);
    for (const auto* run : todo) {
      const int attempt = (records.count(run->name) ? records[run->name].attempts : 0) + 1;
      const auto dir = session.paths.local_dir(run->name, attempt);
      fs::remove_all(dir);
      fs::create_directories(dir);
      const auto raw = dir / "collbench.jsonl.raw";
      const auto log = dir / "output.log";
      const Command cmd = mpirun_command(*run, session.tools, raw, cores);
      session.manifest.append({{"event", "started"},
                               {"run", run->name},
                               {"mode", "local"},
                               {"attempt", attempt},
                               {"output", log.string()},
                               {"raw_jsonl", raw.string()},
                               {"command", cmd.argv},
                               {"labels", run_labels(c, *run)}});
      progress.start(fmt::format("{} ({} ranks)", run->name, run->ranks()));
      const auto t0 = Clock::now();
      ProcessSpec spec{cmd.argv, apply_env(current_environment(), cmd.env), log, limit, 10};
      // mpirun stays in our process group so that Ctrl-C stops it and its ranks with us.
      spec.new_process_group = false;
      const ProcessResult r = run_process(spec);
      const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
      std::string reason;
      ResultsSummary summary;
      if (r.timed_out) {
        reason = fmt::format("timeout: the run exceeded time_limit {} (see {})", c.time_limit,
                             log.string());
      } else if (!r.ok()) {
        const std::string tail = read_tail(log, 4096);
        std::string hint;
        if (tail.find("as root") != std::string::npos &&
            tail.find("OMPI_ALLOW_RUN_AS_ROOT") != std::string::npos) {
          hint =
              "; mpirun refuses root: set OMPI_ALLOW_RUN_AS_ROOT=1 "
              "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1";
        }
        const std::string what = r.signal
                                     ? fmt::format("non-zero exit: mpirun {}", r.describe())
                                     : describe_failed_exit(r.exit_code, summarize_results(raw));
        reason = fmt::format("{} (see {}){}", what, log.string(), hint);
      } else {
        const auto found = summarize_results(raw);
        if (!found || found->results == 0) {
          reason = fmt::format("no output: collbench exited 0 but wrote no results (see {})",
                               log.string());
        } else {
          summary = write_labelled(raw, session.paths.collected(run->name), run_labels(c, *run));
        }
      }
      if (reason.empty()) {
        session.manifest.append({{"event", "collected"},
                                 {"run", run->name},
                                 {"attempt", attempt},
                                 {"file", session.paths.collected(run->name).filename().string()},
                                 {"results", summary.results},
                                 {"wrong", summary.wrong},
                                 {"seconds", seconds}});
        progress.finish(fmt::format("ok     {}  {} result rows in {:.1f} s", run->name,
                                    summary.results, seconds));
      } else {
        session.manifest.append({{"event", "failed"},
                                 {"run", run->name},
                                 {"attempt", attempt},
                                 {"reason", reason},
                                 {"seconds", seconds}});
        progress.finish(fmt::format("FAILED {}: {}", run->name, reason));
      }
    }
  }
  records = session.manifest.runs();
  int ok = 0, bad = 0;
  for (const auto& run : session.runs) {
    auto it = records.find(run.name);
    if (it == records.end()) continue;
    ok += it->second.state == State::kCollected;
    bad += it->second.state == State::kFailed;
  }
  std::string summary = fmt::format("{}: {} of {} runs done, {} failed; results in {}", c.name, ok,
                                    session.runs.size(), bad, session.paths.root.string());
  if (failed_skipped)
    summary += fmt::format(" ({} failed runs skipped: pass --retry-failed)", failed_skipped);
  print(s, summary);
  return failure_exit_code(records, session.runs);
}

int run_slurm(const SweepSettings& s, const SubmitSettings& sub, const WaitSettings& w) {
  if (const int rc = submit(s, sub); rc != 0 || sub.dry_run) return rc;
  if (const int rc = wait(s, w); rc != 0) return rc;
  return collect(s);
}

}  // namespace collbench::sweep
