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
    message(FATAL_ERROR "collbench-sweep needs yaml-cpp: run scripts/setup build (Debian package "
                        "libyaml-cpp-dev), or configure with -DCOLLBENCH_BUILD_SWEEP=OFF")
  endif()
endif()
if(COLLBENCH_BUILD_REPORT)
  find_package(simdjson CONFIG)
  if(NOT simdjson_FOUND)
    message(FATAL_ERROR "collbench-report needs simdjson: run scripts/setup build (Debian package "
                        "libsimdjson-dev), or configure with -DCOLLBENCH_BUILD_REPORT=OFF")
  endif()
endif()
if(COLLBENCH_BUILD_TESTS)
  find_package(GTest)
  if(NOT GTest_FOUND)
    message(FATAL_ERROR "the tests need GoogleTest: run scripts/setup test (Debian packages "
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

# The cluster's own libraries before the distribution's (MPI_HOME, /opt/amazon/openmpi, ...).
include(CollbenchClusterLibraries)

# --- MPI: the bootstrap for multi-rank runs and the host-memory backend.
if(NOT DEFINED COLLBENCH_WITH_MPI OR COLLBENCH_WITH_MPI)
  find_package(MPI COMPONENTS C)
endif()
collbench_optional(MPI MPI_C_FOUND)

# --- CUDA architectures. The kernels need an image for every GPU people compare: PTX of one
# architecture does not run on older GPUs (compute_90 has no image for an A100), so by default
# every family from Turing up that this nvcc can build gets SASS, and the newest also gets PTX so
# that GPUs newer than the compiler JIT it. Explicit numbers, never `native`: build machines have
# no GPU. What wins, first to last: CMAKE_CUDA_ARCHITECTURES (-D, or CMake's CUDAARCHS environment
# variable), COLLBENCH_CUDA_ARCHITECTURES, the derived list.
#   75 T4 (g4dn) · 80 A100 (p4d, p4de) · 86 A10G (g5) · 89 L4, L40S (g6, g6e) · 90 H100, H200 (p5,
#   p5e, p5en) · 100 B200 (p6-b200) · 120 RTX PRO 6000 Blackwell. SASS also runs on the later minor
#   versions of its major one, so B300 (103) and GB10 (121) use the 100 and 120 images; the
#   embedded 87, 88 and 110 are left out.
set(COLLBENCH_CUDA_FAMILIES 75 80 86 89 90 100 120)
set(COLLBENCH_CUDA_ARCHITECTURES "" CACHE STRING
    "CUDA architectures of the kernels, in CMAKE_CUDA_ARCHITECTURES syntax (e.g. 80-real;90); empty: \
every one of ${COLLBENCH_CUDA_FAMILIES} that nvcc supports, plus PTX of the newest")

# Sets CMAKE_CUDA_ARCHITECTURES (before enable_language(CUDA), which would otherwise take nvcc's
# default: sm_75 alone for CUDA 13) unless the user did, and _collbench_cuda_arch_source to say where the list came from.
macro(collbench_cuda_architectures)
  if(DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(_collbench_cuda_arch_source "CMAKE_CUDA_ARCHITECTURES")
  elseif(DEFINED ENV{CUDAARCHS})
    set(_collbench_cuda_arch_source "the CUDAARCHS environment variable")
  elseif(NOT COLLBENCH_CUDA_ARCHITECTURES STREQUAL "")
    set(CMAKE_CUDA_ARCHITECTURES ${COLLBENCH_CUDA_ARCHITECTURES})
    set(_collbench_cuda_arch_source "COLLBENCH_CUDA_ARCHITECTURES")
  else()
    # nvcc's own list of real architectures (sm_75 ... sm_121 for CUDA 13.0; CUDA 11.8 stops at
    # sm_90), so the list follows the compiler in use without a table of versions.
    execute_process(COMMAND ${CMAKE_CUDA_COMPILER} --list-gpu-code OUTPUT_VARIABLE _codes
                    RESULT_VARIABLE _result ERROR_QUIET)
    if(NOT _result EQUAL 0)
      message(FATAL_ERROR "${CMAKE_CUDA_COMPILER} --list-gpu-code failed (nvcc older than 11.0?): "
                          "name the architectures with -DCOLLBENCH_CUDA_ARCHITECTURES=...")
    endif()
    string(REGEX MATCHALL "sm_[0-9]+" _codes "${_codes}")
    set(_architectures)
    foreach(_family ${COLLBENCH_CUDA_FAMILIES})
      if("sm_${_family}" IN_LIST _codes)
        list(APPEND _architectures ${_family}-real)
        set(_newest ${_family})
      endif()
    endforeach()
    if(NOT _architectures)
      message(FATAL_ERROR "${CMAKE_CUDA_COMPILER} builds none of ${COLLBENCH_CUDA_FAMILIES}: name "
                          "the architectures with -DCOLLBENCH_CUDA_ARCHITECTURES=...")
    endif()
    set(CMAKE_CUDA_ARCHITECTURES ${_architectures} ${_newest}-virtual)
    set(_collbench_cuda_arch_source "derived from nvcc --list-gpu-code; override with COLLBENCH_CUDA_ARCHITECTURES")
  endif()
endmacro()

# collbench_cuda_images(ARCHITECTURES SASS_VAR PTX_VAR): the architecture numbers that get SASS and
# PTX from a CMAKE_CUDA_ARCHITECTURES value, as nvcc will build them (`N` is both, `N-real` SASS,
# `N-virtual` PTX; `all`, `all-major` and `native` as CMake expands them). OFF leaves the choice to
# nvcc: both lists are then empty. The architecture test compares the built objects with them.
function(collbench_cuda_images architectures sass_var ptx_var)
  if(architectures STREQUAL "all" OR architectures STREQUAL "all-major" OR architectures STREQUAL "native")
    string(TOUPPER "${architectures}" _which)
    string(REPLACE "-" "_" _which "${_which}")
    set(architectures "${CMAKE_CUDA_ARCHITECTURES_${_which}}")
  elseif(NOT architectures)
    set(architectures)
  endif()
  set(sass)
  set(ptx)
  foreach(_entry ${architectures})
    if(_entry MATCHES "^([0-9]+[af]?)(-real|-virtual)?$")
      if(NOT CMAKE_MATCH_2 STREQUAL "-virtual")
        list(APPEND sass ${CMAKE_MATCH_1})
      endif()
      if(NOT CMAKE_MATCH_2 STREQUAL "-real")
        list(APPEND ptx ${CMAKE_MATCH_1})
      endif()
    else()
      message(FATAL_ERROR "CUDA architecture '${_entry}' is not of the form N, N-real or N-virtual")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES sass)
  list(REMOVE_DUPLICATES ptx)
  set(${sass_var} "${sass}" PARENT_SCOPE)
  set(${ptx_var} "${ptx}" PARENT_SCOPE)
endfunction()

# collbench_cuda_gencode(SASS PTX OUT_VAR): nvcc's --generate-code options for those images,
# with one PTX for every SASS image of a plain architecture: the PTX of the oldest, which ptxas
# turns into each newer SASS. nvcc's front end (cicc) then runs once for them all instead of once
# per architecture, a third of the kernels' build time; the kernels use nothing a newer PTX
# would add. Architectures with a feature suffix (90a, 100f) need their own PTX and get it, as
# does every PTX image asked for (embedded for the driver to JIT on GPUs newer than nvcc).
function(collbench_cuda_gencode sass ptx out_var)
  set(plain)
  set(options)
  foreach(_arch ${sass})
    if(_arch MATCHES "^[0-9]+$")
      list(APPEND plain ${_arch})
    else()
      list(APPEND options "--generate-code=arch=compute_${_arch},code=[sm_${_arch}]")
    endif()
  endforeach()
  if(plain)
    list(SORT plain COMPARE NATURAL)
    list(GET plain 0 _oldest)
    list(TRANSFORM plain PREPEND "sm_")
    list(JOIN plain "," _codes)
    list(PREPEND options "--generate-code=arch=compute_${_oldest},code=[${_codes}]")
  endif()
  foreach(_arch ${ptx})
    list(APPEND options "--generate-code=arch=compute_${_arch},code=[compute_${_arch}]")
  endforeach()
  set(${out_var} "${options}" PARENT_SCOPE)
endfunction()

# --- CUDA + NCCL: the GPU backend. The CUDA language is only enabled when nvcc exists, so a
# laptop without CUDA configures cleanly.
set(_cuda_found OFF)
if(NOT DEFINED COLLBENCH_WITH_CUDA OR COLLBENCH_WITH_CUDA)
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    collbench_cuda_architectures()
    enable_language(CUDA)
    collbench_cuda_images("${CMAKE_CUDA_ARCHITECTURES}" COLLBENCH_CUDA_SASS COLLBENCH_CUDA_PTX)
    list(JOIN COLLBENCH_CUDA_SASS " " _sass)
    list(JOIN COLLBENCH_CUDA_PTX " " _ptx)
    message(STATUS "CUDA kernels: SASS for ${_sass}, PTX for ${_ptx} (${_collbench_cuda_arch_source})")
    collbench_cuda_gencode("${COLLBENCH_CUDA_SASS}" "${COLLBENCH_CUDA_PTX}" COLLBENCH_CUDA_GENCODE)
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
collbench_report_cluster_libraries()
