// MPI_Finalize at the end of a run whose outcome is already decided.
#pragma once

namespace collbench {

/// Finalizes MPI for a process that will exit with `exit_status`, every output written and
/// closed. Open MPI 4.1's teardown crashes now and then on one of its own threads (upstream
/// reports about one run in a thousand; open-mpi/ompi#10117): a fault raised while
/// MPI_Finalize runs then ends the process with `exit_status` and one note on stderr instead of
/// turning a finished run, or a bad-usage exit 2, into death by a signal.
void finalize_mpi(int exit_status);

}  // namespace collbench
