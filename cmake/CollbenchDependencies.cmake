# Finds every dependency once and records which optional backends can be built.
# Options COLLBENCH_WITH_{MPI,CUDA,NCCL,OFI} default to AUTO: built when found, skipped (with a
# status line) when not. ON makes a missing dependency a configure error; OFF skips it.

# fmt is used header-only so the benchmark binary carries no libfmt.so dependency: the GPU
# machines it is shipped to are not assumed to have fmt installed.
find_package(fmt REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(Threads REQUIRED)
add_library(collbench_fmt INTERFACE)
target_link_libraries(collbench_fmt INTERFACE fmt::fmt-header-only)

# The tools and suites that are optional need their libraries only when they are built.
if(COLLBENCH_BUILD_SWEEP)
  find_package(yaml-cpp)
  if(NOT yaml-cpp_FOUND)
    message(FATAL_ERROR "collbench-sweep needs yaml-cpp: run scripts/setup (Debian package "
                        "libyaml-cpp-dev), or configure with -DCOLLBENCH_BUILD_SWEEP=OFF")
  endif()
endif()
if(COLLBENCH_BUILD_REPORT)
  find_package(simdjson CONFIG)
  if(NOT simdjson_FOUND)
    message(FATAL_ERROR "collbench-report needs simdjson: run scripts/setup (Debian package "
                        "libsimdjson-dev), or configure with -DCOLLBENCH_BUILD_REPORT=OFF")
  endif()
endif()
if(COLLBENCH_BUILD_TESTS)
  find_package(GTest)
  if(NOT GTest_FOUND)
    message(FATAL_ERROR "the tests need GoogleTest: run scripts/setup (Debian packages "
                        "libgtest-dev libgmock-dev), or configure with -DCOLLBENCH_BUILD_TESTS=OFF")
  endif()
endif()
if(COLLBENCH_BUILD_BENCHMARKS)
  find_package(benchmark QUIET)
  if(NOT benchmark_FOUND)
    message(STATUS "Google Benchmark not found: the benchmarks of collbench itself are not built")
    set(COLLBENCH_BUILD_BENCHMARKS OFF)
  endif()
endif()

# found_var names the variable that says whether the dependency was found.
function(collbench_optional name found_var)
  set(found OFF)
  if(${found_var})
    set(found ON)
  endif()
  set(value "${COLLBENCH_WITH_${name}}")
  if(value STREQUAL "")
    set(value AUTO)
  endif()
  if(value STREQUAL "AUTO")
    set(result ${found})
  elseif(value)
    if(NOT found)
      message(FATAL_ERROR "COLLBENCH_WITH_${name}=ON but its dependency was not found")
    endif()
    set(result ON)
  else()
    set(result OFF)
  endif()
  # The cache keeps the user's choice (AUTO by default, re-detected on every configure); the
  # normal variable of the same name holds the outcome for the rest of the build.
  set(COLLBENCH_WITH_${name} AUTO CACHE STRING "Build ${name} support (AUTO/ON/OFF)")
  set(COLLBENCH_WITH_${name} ${result} PARENT_SCOPE)
endfunction()

# --- MPI: the bootstrap for multi-rank runs and the host-memory backend.
if(NOT DEFINED COLLBENCH_WITH_MPI OR COLLBENCH_WITH_MPI)
  find_package(MPI COMPONENTS C)
endif()
collbench_optional(MPI MPI_C_FOUND)

# --- CUDA + NCCL: the GPU backend. The CUDA language is only enabled when nvcc exists, so a
# laptop without CUDA configures cleanly.
set(_cuda_found OFF)
if(NOT DEFINED COLLBENCH_WITH_CUDA OR COLLBENCH_WITH_CUDA)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    # Explicit architectures: `native` fails on build machines without a GPU. sm_90 SASS for
    # Hopper plus compute_90 PTX so newer GPUs JIT the kernels.
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 90-real 90-virtual)
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit)
    if(CUDAToolkit_FOUND)
      set(_cuda_found ON)
    endif()
  endif()
endif()
collbench_optional(CUDA _cuda_found)

set(_nccl_found OFF)
if(COLLBENCH_WITH_CUDA AND (NOT DEFINED COLLBENCH_WITH_NCCL OR COLLBENCH_WITH_NCCL))
  find_package(NCCL)
  set(_nccl_found ${NCCL_FOUND})
endif()
collbench_optional(NCCL _nccl_found)

# --- libfabric: the raw-fabric backend.
set(_ofi_found OFF)
if(NOT DEFINED COLLBENCH_WITH_OFI OR COLLBENCH_WITH_OFI)
  find_package(Libfabric)
  set(_ofi_found ${Libfabric_FOUND})
endif()
collbench_optional(OFI _ofi_found)
