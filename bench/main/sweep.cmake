# collbench-sweep: the campaign tool. It links the collective registry only to check campaign
# files against collbench's own option parser; it links no MPI, CUDA or NCCL (it starts mpirun,
# sbatch and srun as child processes).
if(TARGET collbench_sweep)
  add_executable(collbench-sweep ${CMAKE_CURRENT_LIST_DIR}/collbench_sweep.cpp)
  target_link_libraries(collbench-sweep PRIVATE collbench_sweep collbench_harness collbench_collectives
                        CLI11::CLI11 collbench_warnings)
endif()
