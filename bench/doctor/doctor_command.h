// `collbench doctor`: is this cluster set up right? Launched like collbench (mpirun or srun,
// best one rank per node) or alone on one host. Every host's first rank collects the host's
// facts, rank 0 checks each host, applies the environment rules, compares the hosts and prints
// a table (or JSON). Exit 0: all fine; 1: a check failed (a warning too with --strict); 2: bad
// usage; 3: the facts could not be collected or written.
#pragma once

#include "collbench/bootstrap.h"
#include "collbench/error.h"

namespace collbench::doctor {

/// argv[0] is "doctor"; the rest are the doctor's options.
ExitCode run_doctor(Bootstrap& bootstrap, int argc, char** argv);

}  // namespace collbench::doctor
