# sh launch.sh KIND PROGRAM [ARGS...]: PROGRAM in the environment of its KIND (written by device-check).
#   collbench, nccl-tests: an MPI rank. Outside mpirun it starts itself as one rank with mpirun -np 1
#     (never an MPI singleton); as a rank it adds the libraries of its kind and, when
#     DEVICE_CHECK_HOSTS is set, claims host $DEVICE_CHECK_HOSTS-<rank> (NCCL_HOSTID; nccl-tests also
#     needs NCCL_TESTS_DEVICE=0 to put every rank on GPU 0); DEVICE_CHECK_RAS_PORTS=P gives rank R
#     NCCL's RAS client port P+R (NCCL_RAS_ADDR).
#   tool: a program without MPI (the GPU tests, the kernel benchmark), with the bundle's libraries.
#   mpirun: mpirun in the environment the check started with.
original_set=1
original=/usr/local/nvidia/lib64:/usr/local/nvidia/lib
bundle_libs=build/device-bundle/lib
nccl_tests_libs=''
kind=$1
shift
restore() {
  if [ "$original_set" = 1 ]; then LD_LIBRARY_PATH=$original; export LD_LIBRARY_PATH; else unset LD_LIBRARY_PATH; fi
}
with_libraries() {
  restore
  if [ -n "$1" ]; then LD_LIBRARY_PATH=$1${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; export LD_LIBRARY_PATH; fi
}
case $kind in
  collbench | nccl-tests)
    if [ -z "${OMPI_COMM_WORLD_SIZE:-}" ]; then
      restore
      exec mpirun -np 1 sh "$0" "$kind" "$@"
    fi
    if [ "$kind" = collbench ]; then with_libraries "$bundle_libs"; else with_libraries "$nccl_tests_libs"; fi
    if [ -n "${DEVICE_CHECK_HOSTS:-}" ]; then
      NCCL_HOSTID=$DEVICE_CHECK_HOSTS-${OMPI_COMM_WORLD_RANK:-0}
      export NCCL_HOSTID
      if [ "$kind" = nccl-tests ]; then NCCL_TESTS_DEVICE=0; export NCCL_TESTS_DEVICE; fi
    fi
    # A RAS client port per rank, as each node has its own: otherwise one rank's process holds
    # the host's one port for all, and stopping that rank silences NCCL's RAS for every other.
    if [ -n "${DEVICE_CHECK_RAS_PORTS:-}" ]; then
      NCCL_RAS_ADDR=localhost:$((DEVICE_CHECK_RAS_PORTS + ${OMPI_COMM_WORLD_RANK:-0}))
      export NCCL_RAS_ADDR
    fi ;;
  tool) with_libraries "$bundle_libs" ;;
  mpirun) restore ;;
  *) echo "launch.sh: unknown kind '$kind'" >&2; exit 2 ;;
esac
exec "$@"
