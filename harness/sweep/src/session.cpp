#include "session.h"

#include <fmt/format.h>

#include <cstdio>

#include "collbench/error.h"
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
