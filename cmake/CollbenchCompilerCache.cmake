# Compiles through ccache where it is installed (scripts/setup installs it with the compiler).
#
# Why: `make test` builds the CUDA + NCCL stand-in as a configuration of its own inside this build
# directory (scripts/build-gpu-stand-in), and most of its objects (the harness, the doctor, the
# MPI and NCCL backends) come from the very same compile commands as this build's. The cache
# hands them over instead of compiling them twice: on 2 cores that was most of the stand-in's
# five-minute build.
#
# ccache's base_dir (COLLBENCH_COMPILER_CACHE_BASE) is the outermost build directory: below it
# paths are hashed relative to where each compiler runs, so the two builds' generated batch
# sources (build/X and build/gpu-stand-in/X) hash alike; sources and include directories outside
# it keep their absolute paths, the same in both builds.
option(COLLBENCH_COMPILER_CACHE "Compile C and C++ through ccache when it is installed" ON)
set(COLLBENCH_COMPILER_CACHE_BASE "${CMAKE_BINARY_DIR}" CACHE PATH
    "ccache's base_dir: the outermost build directory whose objects this build may share")
if(COLLBENCH_COMPILER_CACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  find_program(COLLBENCH_CCACHE ccache)
  if(COLLBENCH_CCACHE)
    set(_collbench_launcher ${CMAKE_COMMAND} -E env CCACHE_BASEDIR=${COLLBENCH_COMPILER_CACHE_BASE}
                            ${COLLBENCH_CCACHE})
    set(CMAKE_C_COMPILER_LAUNCHER ${_collbench_launcher})
    set(CMAKE_CXX_COMPILER_LAUNCHER ${_collbench_launcher})
  endif()
endif()
