// collbench: parse -> run -> one catch. Launched once per rank by mpirun or srun.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <vector>

#include "backends.h"
#include "backends/catalog.h"
#include "collbench/agreement.h"
#include "collbench/cli.h"
#include "collbench/context_builder.h"
#include "collbench/error.h"
#include "collbench/preflight.h"
#include "collbench/reporter.h"
#include "collbench/runner.h"
#include "collbench/split_run.h"
#include "collbench/thread_ranks.h"
#include "collbench/watchdog.h"
#include "collectives/collectives.h"
#include "doctor_command.h"

namespace collbench {
namespace {

/// Opens the outputs on rank 0; every rank learns whether that worked, so a bad --jsonl path
/// ends the whole job with exit 2 instead of leaving the other ranks waiting.
void open_outputs(const Options& options, Bootstrap& bootstrap, ReporterList& reporters) {
  std::string error;
  ExitCode code = ExitCode::kUsage;
  if (bootstrap.rank() == 0) {
    if (!options.quiet) {
      reporters.add(make_console_reporter(
          stdout, ConsoleOptions{options.report_cputime, options.report_timestamps,
                                 options.min_busbw, options.nccl_tests_min_bw}));
    }
    try {
      // -J leaves nothing behind when refused; the JSONL file, opened for appending, would.
      if (!options.nccl_tests_json.empty()) {
        reporters.add(make_nccl_tests_json_reporter(options.nccl_tests_json, options));
      }
      // A FIFO's reader is waited for as long as --timeout allows an operation to hang.
      if (!options.jsonl.empty())
        reporters.add(make_jsonl_reporter(options.jsonl, options.timeout_s));
    } catch (const Error& e) {
      error = e.what();
      code = e.code();
    }
  }
  // Every rank learns the outcome and its exit code (a missing FIFO reader is a runtime
  // failure, a bad path bad usage).
  const double outcome = bootstrap.allreduce(
      error.empty() ? 0.0 : static_cast<double>(exit_status(code)), ScalarOp::kMax);
  if (outcome > 0.5) {
    throw Error(static_cast<ExitCode>(static_cast<int>(outcome)),
                error.empty() ? "--jsonl/-J: rank 0 could not open the file" : error,
                Reach::kEveryRank);
  }
}

/// Set by SIGINT and SIGTERM: the run ends after the size in progress, with every row written.
/// A second signal ends the process at once (a run stuck in the library would not notice).
std::atomic<bool> stop_requested{false};

void request_stop(int signal) {
  if (stop_requested.exchange(true)) {
    std::signal(signal, SIG_DFL);
    std::raise(signal);
  }
}

/// The exit code of a run that measured without error: wrong data or a busbw below the asked
/// minimum fail its checks.
ExitCode verdict(const Options& options, const RunTotals& totals, int rank) {
  if (totals.wrong > 0) {
    if (rank == 0) {
      std::fprintf(stderr, "collbench: %lld wrong elements; %s\n",
                   static_cast<long long>(totals.wrong), totals.first_mismatch.c_str());
    }
    return ExitCode::kCheckFailed;
  }
  const auto meets =
      busbw_meets(totals.average_busbw(), options.min_busbw, options.nccl_tests_min_bw);
  if (meets && !*meets) {
    if (rank == 0) {
      std::fprintf(stderr,
                   "collbench: the average busbw %.3f GB/s is below the minimum asked for "
                   "(--min-busbw %s, NCCL_TESTS_MIN_BW %s with nccl-tests' 10%% allowance)\n",
                   totals.average_busbw(),
                   options.min_busbw ? fmt::format("{:g}", *options.min_busbw).c_str() : "unset",
                   options.nccl_tests_min_bw
                       ? fmt::format("{:g}", *options.nccl_tests_min_bw).c_str()
                       : "unset");
    }
    return ExitCode::kCheckFailed;
  }
  return ExitCode::kOk;
}

/// collbench's command line, parsed once per process, before its ranks start (-t and -g say how
/// many), and read by each of them.
struct CommandLine {
  ParseResult parsed;
  std::string usage_error;     ///< reported once the ranks agree on it
  std::exception_ptr failure;  ///< any other error of parsing, thrown by each rank
};

CommandLine read_command_line(int argc, char** argv) {
  CommandLine line;
  try {
    line.parsed = parse_command_line(argc, argv, all_specs(), backend_catalog());
  } catch (const Error& e) {
    if (e.code() == ExitCode::kUsage)
      line.usage_error = e.what();
    else
      line.failure = std::current_exception();
  } catch (...) {
    line.failure = std::current_exception();
  }
  return line;
}

ExitCode run(Bootstrap& bootstrap, const CommandLine& line) {
  if (line.failure) std::rethrow_exception(line.failure);
  const ParseResult& parsed = line.parsed;
  // Before anything else crosses the bootstrap: ranks given different options would measure
  // different things, and hang or report wrong data.
  agree_on_command_line(bootstrap, parsed, line.usage_error);
  if (!parsed.exit_text.empty()) {
    if (bootstrap.rank() == 0 &&
        (std::fputs(parsed.exit_text.c_str(), stdout) == EOF || std::fflush(stdout) != 0)) {
      throw_runtime("stdout: write failed ({})", std::strerror(errno));
    }
    return ExitCode::kOk;
  }
  validate_for_world(parsed.options, bootstrap.size(), all_specs());
  std::vector<const CollectiveSpec*> tests;
  for (const auto& test : parsed.options.tests) tests.push_back(find_spec(all_specs(), test));

  const BackendDescriptor& chosen = chosen_backend(parsed.options);
  // Resolved once, before anything reads it; nothing changes the options after this.
  const Options options = with_backend_defaults(parsed.options, chosen);
  if (options.ranks_per_process() > 1 && !chosen.thread_ranks) {
    throw_usage(
        "-t {} -g {}: the {} backend runs one rank per process; launch {} processes per node "
        "instead (mpirun -np, srun --ntasks-per-node)",
        options.threads_per_process, options.gpus_per_thread, chosen.name,
        options.ranks_per_process());
  }
  const BackendArgs args = backend_args(options, chosen, backend_catalog());

  // The watchdog exists before the backend and outlives it, so that start-up (the
  // communicator's first connections) and teardown are bounded by --timeout too. On a hang it
  // stops the library from waiting, then ends every rank with exit code 3.
  std::unique_ptr<Backend> backend;
  std::atomic<Backend*> started{nullptr};
  Watchdog watchdog(
      bootstrap, options.timeout_s,
      [&](const std::string& report) {
        if (Backend* b = started.load()) b->abort();
        bootstrap.abort(exit_status(ExitCode::kRuntime), report);
      },
      // What the library knows of the hang (NCCL: the rank behind, from its RAS service), asked
      // before any rank's abort() tears its part of the library down.
      [&]() -> std::optional<std::string> {
        Backend* b = started.load();
        return b ? b->diagnose_hang() : std::nullopt;
      });
  watchdog.arm(fmt::format("start-up of the {} backend", chosen.name), 1);
  backend = make_backend(chosen, options, args, bootstrap);
  started = backend.get();
  watchdog.disarm();
  preflight(options, bootstrap, *backend, tests);

  const std::string run_id = broadcast(bootstrap, make_run_id(), 0, "run id");
  ReporterList reporters;
  open_outputs(options, bootstrap, reporters);
  const RunContext context = build_context(options, args, bootstrap, *backend, run_id);
  if (bootstrap.rank() == 0) reporters.context(context);

  std::signal(SIGINT, request_stop);
  std::signal(SIGTERM, request_stop);
  // SIGUSR1 too: it is what a launcher forwards to every rank without ending the job itself
  // (Open MPI's mpirun forwards it; `scancel --signal=USR1` sends it to a Slurm job's tasks), so
  // that `-N 0` under mpirun or srun stops at the next size with every row written and exit 0.
  std::signal(SIGUSR1, request_stop);
  RunTotals totals;
  if (options.split) {
    // Every group starts a backend of its own on its group's bootstrap (for NCCL a
    // communicator of the group's ranks); the whole job's backend stays up for the context.
    const SplitRun split{
        options,   *options.split,
        bootstrap, [&](Bootstrap& group) { return make_backend(chosen, options, args, group); },
        reporters, &watchdog,
        run_id,    &stop_requested};
    totals = run_split(split, tests);
  } else {
    Runner runner(options, bootstrap, *backend, reporters, &watchdog, run_id);
    runner.stop_on(stop_requested);
    totals = runner.run(tests);
  }

  watchdog.arm(fmt::format("teardown of the {} backend", chosen.name), 1);
  started = nullptr;
  backend.reset();
  watchdog.disarm();
  return verdict(options, totals, bootstrap.rank());
}

/// One rank from start to end, with its errors reported as one line. A runtime error ends the
/// whole job (the other ranks may be waiting for this one); a usage error is found identically
/// on every rank, so rank 0 reports it and every rank returns.
int rank_main(Bootstrap& bootstrap, const std::function<ExitCode()>& body) {
  try {
    return exit_status(body());
  } catch (const Error& e) {
    if (e.code() == ExitCode::kUsage) {
      if (bootstrap.rank() == 0) std::fprintf(stderr, "collbench: %s\n", e.what());
      return exit_status(e.code());
    }
    // Every rank is ending with this error (the ranks agreed on it, or there is one rank): each
    // returns the code and finalizes, with one line from rank 0, instead of MPI_Abort, whose
    // launcher noise would bury that line.
    if (e.every_rank() || bootstrap.size() == 1) {
      if (bootstrap.rank() == 0) {
        std::fprintf(stderr, "collbench: rank %d (%s): %s\n", bootstrap.rank(),
                     bootstrap.hostname().c_str(), e.what());
      }
      return exit_status(e.code());
    }
    std::fprintf(stderr, "collbench: rank %d (%s): %s\n", bootstrap.rank(),
                 bootstrap.hostname().c_str(), e.what());
    bootstrap.abort(exit_status(e.code()), e.what());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "collbench: rank %d (%s): internal error: %s\n", bootstrap.rank(),
                 bootstrap.hostname().c_str(), e.what());
    if (bootstrap.size() == 1) return exit_status(ExitCode::kRuntime);
    bootstrap.abort(exit_status(ExitCode::kRuntime), e.what());
  }
  return exit_status(ExitCode::kRuntime);  // not reached: abort() ends the job
}

/// The ranks this process runs: -t x -g for a backend that takes several per process, else 1
/// (the run then refuses the options with one line, as it reports any bad command line).
int ranks_per_process(const CommandLine& line) {
  if (line.failure || !line.usage_error.empty() || !line.parsed.exit_text.empty()) return 1;
  try {
    const int k = line.parsed.options.ranks_per_process();
    return k > 1 && chosen_backend(line.parsed.options).thread_ranks ? k : 1;
  } catch (const Error&) {
    return 1;
  }
}

/// This process's ranks: one, or with -t/-g each on a thread of its own, the most severe status
/// being the process's.
int run_process(Bootstrap& bootstrap, int argc, char** argv) {
  // `collbench doctor ...`: the set-up checks instead of a measurement, on the same launch.
  if (argc > 1 && std::strcmp(argv[1], "doctor") == 0) {
    return rank_main(bootstrap, [&] { return doctor::run_doctor(bootstrap, argc - 1, argv + 1); });
  }
  const CommandLine line = read_command_line(argc, argv);
  const int per_process = ranks_per_process(line);
  if (per_process == 1) return rank_main(bootstrap, [&] { return run(bootstrap, line); });
  ThreadRanks ranks(bootstrap, per_process);
  const std::vector<int> statuses = ranks.run([&](int index) {
    const std::unique_ptr<Bootstrap> mine = ranks.bootstrap(index);
    return rank_main(*mine, [&] { return run(*mine, line); });
  });
  return *std::max_element(statuses.begin(), statuses.end());
}

}  // namespace
}  // namespace collbench

int main(int argc, char** argv) {
  using namespace collbench;
  // A reader that goes away (a closed pipe, a FIFO's reader) is a write that fails: exit 3 with
  // its line, not death by SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  std::unique_ptr<Bootstrap> bootstrap;
  try {
    bootstrap = make_bootstrap(&argc, &argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "collbench: cannot start: %s\n", e.what());
    return exit_status(ExitCode::kRuntime);
  }
  const int status = run_process(*bootstrap, argc, argv);
  bootstrap->finish(status);
  return status;
}
