/* Stands in for a user's own profiler plugin (NCCL Inspector, a site's libnccl-profiler.so): a
 * library exporting an interface NCCL would load. Only the symbol matters to collbench, which
 * must stand aside for it; nothing calls the table. */
struct user_profiler_table {
  const char* name;
};
const struct user_profiler_table ncclProfiler_v4 = {"user"};
