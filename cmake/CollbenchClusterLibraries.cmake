# Which MPI, CUDA, NCCL and libfabric a cluster's build uses: the cluster's own, never the
# distribution's by accident. On a cluster the libraries that reach the fabric are not the ones
# the distribution packages: the EFA installer puts Open MPI in /opt/amazon/openmpi and an
# EFA-enabled libfabric in /opt/amazon/efa; NCCL lives in /opt/nccl/build or the CUDA toolkit;
# HPC-X's module names its MPI in HPCX_MPI_DIR. A build against Debian's Open MPI there measures
# TCP where the user expects EFA, and the libfabric backend links a library without the efa
# provider.
#
# What wins, for each library, first to last:
#   1. <NAME>_HOME given to CMake (-DMPI_HOME=...), as nccl-tests' Makefile names them;
#   2. <NAME>_HOME in the environment (module files set them);
#   3. the cluster's well-known locations, in the order listed below;
#   4. the system's default search (the distribution's packages).
# A <NAME>_HOME that does not hold the library is a configure error naming it, never silently
# skipped. Configure prints one line per library: its version, where it is and why there.
# COLLBENCH_CLUSTER_ROOT (tests only) stands for / in the well-known locations, so that a test can
# lay out a cluster's tree anywhere.

set(COLLBENCH_CLUSTER_ROOT "" CACHE PATH
    "Tests only: the directory that stands for / in the cluster's well-known library locations")
mark_as_advanced(COLLBENCH_CLUSTER_ROOT)

# collbench_cluster_home(NAME MARKER OUT_DIR OUT_WHY [LOCATION WHY]...): the directory of library
# NAME (MPI, CUDA, NCCL, LIBFABRIC) that holds MARKER, and why it was chosen; both empty when
# the system's search decides.
function(collbench_cluster_home name marker out_dir out_why)
  set(dir "")
  set(why "")
  if(NOT "${${name}_HOME}" STREQUAL "")
    set(dir "${${name}_HOME}")
    set(why "${name}_HOME given to CMake")
  elseif(NOT "$ENV{${name}_HOME}" STREQUAL "")
    set(dir "$ENV{${name}_HOME}")
    set(why "${name}_HOME in the environment")
  endif()
  if(dir)
    if(NOT EXISTS "${dir}/${marker}")
      message(FATAL_ERROR "${name}_HOME=${dir} holds no ${marker}: give the directory the library "
                          "was installed to (its ${marker} must exist), or unset ${name}_HOME")
    endif()
  else()
    set(candidates ${ARGN})
    while(candidates)
      list(POP_FRONT candidates location reason)
      if(location AND EXISTS "${COLLBENCH_CLUSTER_ROOT}${location}/${marker}")
        set(dir "${COLLBENCH_CLUSTER_ROOT}${location}")
        set(why "${reason}")
        break()
      endif()
    endwhile()
  endif()
  set(${out_dir} "${dir}" PARENT_SCOPE)
  set(${out_why} "${why}" PARENT_SCOPE)
endfunction()

# The real directory of a path, for comparing two installations reached through links.
function(collbench_real_dir path out)
  get_filename_component(real "${path}" REALPATH)
  get_filename_component(real "${real}" DIRECTORY)
  set(${out} "${real}" PARENT_SCOPE)
endfunction()

# --- Before the searches: point each one at the chosen directory.
collbench_cluster_home(MPI bin/mpicc COLLBENCH_MPI_HOME COLLBENCH_MPI_WHY
  /opt/amazon/openmpi "the EFA installer's Open MPI"
  /opt/amazon/openmpi5 "the EFA installer's Open MPI 5"
  "$ENV{HPCX_MPI_DIR}" "HPC-X's Open MPI (HPCX_MPI_DIR)")
if(COLLBENCH_MPI_HOME)
  # FindMPI asks this wrapper for the include directories and libraries.
  set(MPI_C_COMPILER "${COLLBENCH_MPI_HOME}/bin/mpicc" CACHE FILEPATH "MPI's C compiler wrapper" FORCE)
  if(EXISTS "${COLLBENCH_MPI_HOME}/bin/mpiexec")
    set(MPIEXEC_EXECUTABLE "${COLLBENCH_MPI_HOME}/bin/mpiexec" CACHE FILEPATH "MPI's launcher" FORCE)
  endif()
endif()

collbench_cluster_home(CUDA bin/nvcc COLLBENCH_CUDA_HOME COLLBENCH_CUDA_WHY
  /usr/local/cuda "the CUDA toolkit's default location")
if(COLLBENCH_CUDA_HOME AND NOT CMAKE_CUDA_COMPILER)
  set(CMAKE_CUDA_COMPILER "${COLLBENCH_CUDA_HOME}/bin/nvcc")
  set(CUDAToolkit_ROOT "${COLLBENCH_CUDA_HOME}")
endif()

collbench_cluster_home(NCCL include/nccl.h COLLBENCH_NCCL_HOME COLLBENCH_NCCL_WHY
  /opt/nccl/build "NCCL built from source (the DLAMI's and ParallelCluster's location)")
if(COLLBENCH_NCCL_HOME)
  set(NCCL_ROOT "${COLLBENCH_NCCL_HOME}")
endif()

collbench_cluster_home(LIBFABRIC include/rdma/fabric.h COLLBENCH_LIBFABRIC_HOME COLLBENCH_LIBFABRIC_WHY
  /opt/amazon/efa "the EFA installer's libfabric (with the efa provider)")
if(COLLBENCH_LIBFABRIC_HOME)
  set(LIBFABRIC_ROOT "${COLLBENCH_LIBFABRIC_HOME}")
endif()

# Configure's line for one library: what was found, and why there (the chosen home's reason, or
# how the default search found it).
function(collbench_library_line library found why default_why)
  if(NOT why)
    set(why "${default_why}")
  endif()
  message(STATUS "collbench: ${library}: ${found} (${why})")
endfunction()

# --- After the searches: one line per library, and the two mix-ups worth a warning.
function(collbench_report_cluster_libraries)
  # MPI
  if(MPI_C_FOUND)
    # The implementation and its version, as its wrapper states them (Open MPI: --showme:version,
    # MPICH and its kin: -v); the MPI standard's version when it states neither.
    set(version "MPI ${MPI_C_VERSION}")
    foreach(_flag --showme:version -v)
      execute_process(COMMAND "${MPI_C_COMPILER}" ${_flag} OUTPUT_VARIABLE _out ERROR_VARIABLE _out
                      RESULT_VARIABLE _rc TIMEOUT 20)
      if(_rc EQUAL 0 AND _out MATCHES "(Open MPI|MPICH|Intel\\(R\\) MPI|MVAPICH2)[^\n(]*[0-9][0-9.a-z]*")
        string(STRIP "${CMAKE_MATCH_0}" version)
        string(REGEX REPLACE " version " " " version "${version}")
        break()
      endif()
    endforeach()
    collbench_library_line(MPI "${version}, ${MPI_C_COMPILER}" "${COLLBENCH_MPI_WHY}"
                           "the system's default search; MPI_HOME chooses another")
    # Runs are launched with the mpirun first on PATH; a build against another MPI fails or
    # silently runs over a different transport.
    find_program(_collbench_path_mpirun NAMES mpirun NO_CACHE)
    get_filename_component(_wrapper_dir "${MPI_C_COMPILER}" DIRECTORY)
    if(_collbench_path_mpirun AND NOT EXISTS "${_wrapper_dir}/mpirun")
      message(WARNING "collbench: the MPI built against (${MPI_C_COMPILER}) has no mpirun beside it, "
                      "and the mpirun first on PATH is ${_collbench_path_mpirun}: launch with the "
                      "MPI built against (put its bin/ first on PATH, or set MPI_HOME)")
    elseif(_collbench_path_mpirun)
      collbench_real_dir("${_collbench_path_mpirun}" _path_dir)
      collbench_real_dir("${_wrapper_dir}/mpirun" _built_dir)
      if(NOT _path_dir STREQUAL _built_dir)
        message(WARNING "collbench: built against the MPI of ${_wrapper_dir}, but the mpirun first "
                        "on PATH is ${_collbench_path_mpirun} (another MPI): runs launched with it "
                        "fail or use another transport; put ${_wrapper_dir} first on PATH, or set "
                        "MPI_HOME to the MPI you launch with")
      endif()
    endif()
  else()
    message(STATUS "collbench: MPI: not found (set MPI_HOME; the mpi backend and multi-rank runs are not built)")
  endif()
  # CUDA and NCCL
  if(COLLBENCH_WITH_CUDA)
    collbench_library_line(CUDA "${CUDAToolkit_VERSION}, ${CUDAToolkit_BIN_DIR}" "${COLLBENCH_CUDA_WHY}"
                           "CMAKE_CUDA_COMPILER or nvcc on PATH; CUDA_HOME chooses another")
  endif()
  if(COLLBENCH_WITH_NCCL)
    collbench_library_line(NCCL "version code ${NCCL_VERSION_HEADER}, ${NCCL_LIBRARY}"
                           "${COLLBENCH_NCCL_WHY}"
                           "the CUDA toolkit's directories, then the system's; NCCL_HOME chooses another")
  endif()
  # libfabric
  if(COLLBENCH_WITH_OFI)
    collbench_library_line(libfabric "${Libfabric_VERSION}, ${Libfabric_LIBRARY}"
                           "${COLLBENCH_LIBFABRIC_WHY}"
                           "pkg-config, then the system's; LIBFABRIC_HOME chooses another")
    set(efa "${COLLBENCH_CLUSTER_ROOT}/opt/amazon/efa")
    if(EXISTS "${efa}")
      # Under it as found (a link there to the library is the installer's own layout) or as
      # resolved (the directory may itself be a link).
      collbench_real_dir("${Libfabric_LIBRARY}" _chosen_dir)
      get_filename_component(_efa_real "${efa}" REALPATH)
      string(FIND "${Libfabric_LIBRARY}" "${efa}/" _as_found)
      string(FIND "${_chosen_dir}/" "${_efa_real}/" _as_resolved)
      if(NOT _as_found EQUAL 0 AND NOT _as_resolved EQUAL 0)
        message(WARNING "collbench: this host has the EFA installer's libfabric (${efa}), but the "
                        "build uses ${Libfabric_LIBRARY}, which may lack the efa provider: the ofi "
                        "backend would then measure TCP; set LIBFABRIC_HOME=${efa}")
      endif()
    endif()
  endif()
endfunction()
