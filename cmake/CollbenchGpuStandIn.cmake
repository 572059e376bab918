# COLLBENCH_GPU_STAND_IN: build against the CUDA + NCCL stand-in (tests/gpu_stand_in), so that
# the NCCL backend, the CUDA device and everything above them run on a machine without a GPU.
# Only ever ON in a build directory of its own (scripts/build-gpu-stand-in); never installed,
# never in a release build: what it measures is not a GPU's.
#
# Included before CollbenchDependencies: the stand-in claims the two targets collbench links its
# GPU code with, CUDA::cudart_static and NCCL::nccl, before FindCUDAToolkit and FindNCCL would
# create them (both leave a target that exists alone). The NCCL backend and kernels/src/
# cuda_device.cpp still compile against the real cuda_runtime.h and nccl.h; kernels/CMakeLists.txt
# leaves out the .cu kernels, whose launchers the stand-in runs on the host.
option(COLLBENCH_GPU_STAND_IN
       "Link the GPU code against the CUDA + NCCL stand-in (tests only: scripts/build-gpu-stand-in)"
       OFF)
if(NOT COLLBENCH_GPU_STAND_IN)
  return()
endif()
if(NOT COLLBENCH_BUILD_TESTS)
  message(FATAL_ERROR "COLLBENCH_GPU_STAND_IN=ON is a test configuration: it needs COLLBENCH_BUILD_TESTS=ON")
endif()
foreach(_target CUDA::cudart_static NCCL::nccl)
  add_library(${_target} INTERFACE IMPORTED)
  set_target_properties(${_target} PROPERTIES INTERFACE_LINK_LIBRARIES collbench_gpu_stand_in)
endforeach()
# FindCUDAToolkit would attach the real runtime's dependencies to CUDA::cudart_static.
add_library(CUDA::cudart_static_deps INTERFACE IMPORTED)
message(STATUS "CUDA + NCCL stand-in: CUDA::cudart_static and NCCL::nccl are tests/gpu_stand_in, "
               "not a GPU (this build is for tests only)")
