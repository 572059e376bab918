// What the readers of other tools' printed output share: a line without what launchers put in
// front of it, and (from collbench/text.h) its words and numbers that must be whole words.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "collbench/text.h"

namespace collbench::report::detail {

/// `line` without the prefix a launcher puts before each line of a process's output: mpirun
/// --tag-output's "[1,0]<stdout>:" and srun --label's "12: ", then trimmed.
std::string_view strip_launcher_prefix(std::string_view line);

/// The test a program name or command line word names, as collbench calls it: nccl-tests'
/// "./build/all_reduce_perf_mpi" -> "all_reduce". "" when `text` holds no "<name>_perf".
std::string_view nccl_tests_program_test(std::string_view text);

/// What a launcher's command line states of the processes it starts.
struct LaunchLine {
  int ranks = 0;  ///< 0: not stated
  int nodes = 0;  ///< srun's -N; 0: not stated
};

/// What the launcher command in `line` states of its run of `program` (a word naming it, a path
/// to it included): mpirun, mpiexec, orterun, prterun and mpirun_rsh with -np N, -n N, --np N
/// or --n N; srun with -n N, -nN, --ntasks=N, or -N nodes × --ntasks-per-node M (ranks), -N
/// (nodes). Only the options between the launcher and the program count (the program's own come
/// after it). nullopt when `line` runs no launcher with `program`; a LaunchLine without ranks
/// when it does but states no count (mpirun -H host:slots ... does not say it in so many words).
std::optional<LaunchLine> launch_of(std::string_view line, std::string_view program);

/// Whether a test reduces (has an op): all_reduce, reduce, reduce_scatter.
bool is_reduction_test(std::string_view test);

/// "X.Y.Z" of an NCCL version code as nccl-tests prints it (22809 -> "2.28.9", 2708 -> "2.7.8").
std::string nccl_version_text(long code);

/// Whether `text` begins with `prefix`, ignoring case.
bool starts_with_nocase(std::string_view text, std::string_view prefix);

}  // namespace collbench::report::detail
