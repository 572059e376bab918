/* A library named like a profiler that exports no profiler interface: NCCL would load no
 * profiler from it, so collbench need not stand aside. */
int not_a_profiler(void) { return 0; }
