// run --local: the campaign's runs one after another through mpirun on this host.
#include <fmt/format.h>

#include <chrono>
#include <fstream>

#include "collbench/error.h"
#include "collbench/sweep/collect.h"
#include "collbench/sweep/commands.h"
#include "collbench/sweep/doctor_gate.h"
#include "collbench/sweep/placement.h"
#include "collbench/sweep/process.h"
#include "collbench/sweep/progress.h"
#include "collbench/sweep/slurm_time.h"
#include "session.h"

namespace collbench::sweep {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using State = RunRecord::State;

// The runs a local run does, and what it leaves alone.
struct LocalPlan {
  std::vector<const RunSpec*> todo;
  int done = 0;
  int failed_skipped = 0;
};

LocalPlan choose_local_runs(const Session& session, const Records& records, const SweepSettings& s,
                            const LocalSettings& opt) {
  LocalPlan plan;
  for (const auto& run : session.runs) {
    const Standing st = standing_of(session, records, run);
    if (!st.live.empty()) {
      // Its launch outlived the collbench-sweep that started it: measuring beside it would
      // disturb both, and its results would be overwritten.
      throw_runtime(
          "run {} is still running from an earlier collbench-sweep (mpirun pid {}, {} "
          "processes); wait for it to end, or stop it with `pkill -TERM -s {}`, then run again",
          run.name, record_of(records, run.name)->launch->pid, st.live.size(),
          record_of(records, run.name)->launch->pid);
    }
    if (st.stale() && st.state != State::kNone) {
      print(s, fmt::format("{}: {}; measuring it again", run.name, stale_reason(session, st, run)));
      plan.todo.push_back(&run);
    } else if (opt.redo || st.state == State::kNone || st.state == State::kStarted) {
      // kStarted: an earlier local run was interrupted in this run; it never ended.
      plan.todo.push_back(&run);
    } else if (st.state == State::kFailed) {
      if (opt.retry_failed)
        plan.todo.push_back(&run);
      else
        ++plan.failed_skipped;
    } else {
      const RunRecord* r = record_of(records, run.name);
      if (r && r->found_on_disk) {
        print(s, fmt::format("{}: its results are in {} (the manifest had lost them); not measured "
                             "again (--redo measures it)",
                             run.name, session.paths.collected(run.name).string()));
      }
      ++plan.done;
    }
  }
  return plan;
}

// One local attempt at a run: its files and its mpirun command.
struct LocalAttempt {
  int number = 1;
  fs::path raw;     ///< collbench's results
  fs::path log;     ///< mpirun's output (after the doctor's, with doctor: on)
  fs::path doctor;  ///< the doctor's JSON report (doctor: on)
  Command command;
};

// Prepares an empty directory for the attempt.
LocalAttempt prepare_local_attempt(const Session& session, const RunSpec& run, int number,
                                   int cores) {
  const auto dir = session.paths.local_dir(run.name, number);
  fs::remove_all(dir);
  fs::create_directories(dir);
  LocalAttempt a{number, dir / "collbench.jsonl.raw", dir / "output.log", dir / "doctor.json", {}};
  a.command = mpirun_command(run, session.tools, a.raw, cores);
  return a;
}

// Records the start of an attempt once mpirun runs, with what defines the run and which
// process mpirun is (so that a later collbench-sweep can tell whether it still runs); without
// one when the doctor stopped the attempt before mpirun.
void record_start(const Session& session, const RunSpec& run, const LocalAttempt& a,
                  const std::optional<LaunchId>& launch) {
  ManifestEvent e(EventKind::kStarted, run.name);
  e.mode = Where::kLocal;
  e.attempt = a.number;
  e.output = a.log.string();
  e.raw_jsonl = a.raw.string();
  e.command = a.command.argv;
  e.labels = run_labels(session.campaign, run);
  e.definition = run_definition(session.campaign, run, Where::kLocal);
  e.launch = launch;
  session.manifest.append(std::move(e));
}

// Adds a line to the attempt's log, between the outputs of the programs it runs.
void log_line(const LocalAttempt& a, const std::string& line) {
  std::ofstream out(a.log, std::ios::app);
  out << line << '\n';
}

// What the campaign's doctor (doctor: check, require or strict) said before an attempt.
struct DoctorOutcome {
  std::optional<Failure> stop;  ///< the attempt fails without measuring
  std::string note;             ///< for the attempt's line when it measures ("" when it passed)
};

// Runs `collbench doctor` once on this host before the attempt, its output, then the verdict,
// at the start of the attempt's log; the same rules as COLLBENCH_DOCTOR in the sbatch template.
DoctorOutcome run_doctor(const Session& session, const RunSpec& run, const LocalAttempt& a,
                         double limit) {
  const DoctorMode mode = session.campaign.doctor;
  const Command command = doctor_command(mode, run, session.tools, a.doctor);
  log_line(a, "# doctor: " + command.display());
  int exit_code = -1;
  std::string how;
  try {
    ProcessSpec spec{command.argv, apply_env(current_environment(), command.env), a.log, limit, 10};
    spec.supervised = true;  // it goes down with us, as mpirun does
    const ProcessResult r = run_process(spec);
    exit_code = r.timed_out ? -1 : r.exit_code;
    how = r.describe();
  } catch (const Error& e) {
    how = e.what();
  }
  const DoctorVerdict v = doctor_verdict(mode, exit_code, how, a.doctor);
  const std::string name(doctor_mode_name(mode));
  if (v.measure) {
    log_line(a, fmt::format("# doctor: {}{}", v.words,
                            exit_code == 0 ? "" : "; measuring anyway (doctor: check)"));
    return {std::nullopt, exit_code == 0 ? "" : v.words};
  }
  log_line(a, fmt::format("# doctor: {}; not measured (doctor: {})", v.words, name));
  return {failure(FailureKind::kNonZeroExit, fmt::format("{}; not measured (doctor: {}; see {})",
                                                         v.words, name, a.log.string())),
          ""};
}

// Why a local attempt that ended as `r` failed, or nullopt when it wrote results.
std::optional<Failure> local_failure(const ProcessResult& r, const LocalAttempt& a,
                                     const std::string& time_limit) {
  if (r.timed_out) {
    return failure(FailureKind::kTimeout, fmt::format("the run exceeded time_limit {} (see {})",
                                                      time_limit, a.log.string()));
  }
  if (!r.ok()) {
    const std::string tail = read_tail(a.log, 4096);
    std::string hint;
    if (tail.find("as root") != std::string::npos &&
        tail.find("OMPI_ALLOW_RUN_AS_ROOT") != std::string::npos) {
      hint = "; mpirun refuses root: set OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1";
    }
    Failure f = r.signal
                    ? failure(FailureKind::kNonZeroExit, fmt::format("mpirun {}", r.describe()))
                    : describe_failed_exit(r.exit_code, summarize_results(a.raw));
    f.reason = fmt::format("{} (see {}){}", f.reason, a.log.string(), hint);
    return f;
  }
  const auto found = summarize_results(a.raw);
  if (!found || found->results == 0) {
    return failure(FailureKind::kNoOutput, fmt::format("collbench exited 0 but wrote no results "
                                                       "(see {})",
                                                       a.log.string()));
  }
  return std::nullopt;
}

// Runs one local attempt to its end and records how it went: its labelled results, or its
// failure.
void run_local_attempt(const Session& session, const RunSpec& run, const LocalAttempt& a,
                       Progress& progress) {
  const auto& c = session.campaign;
  const double limit = c.time_limit.empty() ? 0 : parse_slurm_time(c.time_limit).value_or(0);
  progress.start(fmt::format("{} ({} ranks)", run.name, run.ranks()));
  const auto t0 = Clock::now();
  auto record_failure = [&](const Failure& f) {
    ManifestEvent e(EventKind::kFailed, run.name);
    e.attempt = a.number;
    e.reason = f.reason;
    e.failure = f.kind;
    e.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    session.manifest.append(std::move(e));
    progress.finish(fmt::format("FAILED {}: {}", run.name, f.reason));
  };
  DoctorOutcome doctor;
  if (c.doctor != DoctorMode::kOff) {
    doctor = run_doctor(session, run, a, limit);
    if (doctor.stop) {
      record_start(session, run, a, std::nullopt);
      record_failure(*doctor.stop);
      return;
    }
  }
  ProcessSpec spec{a.command.argv, apply_env(current_environment(), a.command.env), a.log, limit,
                   10};
  // mpirun and its ranks go down with us, however we end (Ctrl-C, SIGTERM, SIGKILL).
  spec.supervised = true;
  spec.on_start = [&](const LaunchId& launch) { record_start(session, run, a, launch); };
  const ProcessResult r = run_process(spec);
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  if (auto f = local_failure(r, a, c.time_limit)) {
    record_failure(*f);
    return;
  }
  const auto dest = session.paths.collected(run.name);
  const auto summary = write_labelled(a.raw, dest, json_value(run_labels(c, run)));
  ManifestEvent e(EventKind::kCollected, run.name);
  e.attempt = a.number;
  e.file = dest.filename().string();
  e.results = summary.results;
  e.wrong = summary.wrong;
  e.seconds = seconds;
  session.manifest.append(std::move(e));
  progress.finish(fmt::format("ok     {}  {} result rows in {:.1f} s{}", run.name, summary.results,
                              seconds, doctor.note.empty() ? "" : " (" + doctor.note + ")"));
}

}  // namespace

int run_local(const SweepSettings& s, const LocalSettings& opt) {
  SweepSettings local = s;
  local.local = true;
  const Session session = open_session(local);
  const auto& c = session.campaign;
  refuse_local_placement(c);
  check_collbench_exists(session.tools);
  if (!find_program(session.tools.mpirun)) {
    throw_runtime(
        "{} not found on PATH; install Open MPI (scripts/setup demo) or pass --mpirun PATH",
        session.tools.mpirun);
  }
  const auto lock = lock_manifest(session, s);
  auto records = load_records(session);
  const LocalPlan plan = choose_local_runs(session, records, s, opt);
  if (!plan.todo.empty()) copy_campaign(session);
  const int cores = usable_cores();
  print(s, fmt::format("{}: {} runs, {} to do, results in {}", c.name, session.runs.size(),
                       plan.todo.size(), session.paths.root.string()));
  {
    Progress progress(s.out, s.tty, static_cast<int>(session.runs.size()) - plan.failed_skipped,
                      plan.done);
    for (const auto* run : plan.todo) {
      const RunRecord* r = record_of(records, run->name);
      const int attempt = (r ? r->attempts : 0) + 1;
      run_local_attempt(session, *run, prepare_local_attempt(session, *run, attempt, cores),
                        progress);
    }
  }
  records = load_records(session);
  auto counts = tally(records, session.runs);
  std::string summary = fmt::format("{}: {} of {} runs done, {} failed; results in {}", c.name,
                                    done_count(session, records), session.runs.size(),
                                    counts[State::kFailed], session.paths.root.string());
  if (plan.failed_skipped)
    summary += fmt::format(" ({} failed runs skipped: pass --retry-failed)", plan.failed_skipped);
  print(s, summary);
  return failure_exit_code(records, session.runs);
}

}  // namespace collbench::sweep
