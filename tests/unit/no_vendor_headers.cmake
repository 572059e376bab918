# Fails when any file under ROOT includes a CUDA, MPI, NCCL or libfabric header.
file(GLOB_RECURSE sources ${ROOT}/*.h ${ROOT}/*.hpp ${ROOT}/*.cpp ${ROOT}/*.cc ${ROOT}/*.cu)
set(offenders "")
foreach(f ${sources})
  # The names are exact: the project's own headers may mention a vendor
  # (nccl_tests_json.h reads nccl-tests' output and includes nothing of NCCL).
  file(STRINGS ${f} lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"](cuda|cuda_runtime|cuda_runtime_api|cuda_fp16|cuda_bf16|cuda_fp8|cuda_profiler_api|nccl|nccl_net|mpi|mpi-ext|rdma/fabric|rdma/fi_[a-z_]+)\\.h[>\"]")
  if(lines)
    list(APPEND offenders "${f}: ${lines}")
  endif()
endforeach()
list(LENGTH sources n)
if(offenders)
  message(FATAL_ERROR "vendor headers included under ${ROOT}:\n${offenders}")
endif()
message(STATUS "checked ${n} files under ${ROOT}: no CUDA/MPI/NCCL/libfabric includes")
