# FindNCCL: locates nccl.h and libnccl: in NCCL_ROOT alone when it is set (the cluster's NCCL,
# cmake/CollbenchClusterLibraries.cmake), else the CUDA toolkit's directories, then the system's.
# Defines NCCL::nccl and NCCL_VERSION_HEADER (the version the headers declare; the library's
# runtime version is read with ncclGetVersion at run time and recorded in results).
if(NCCL_ROOT)
  find_path(NCCL_INCLUDE_DIR nccl.h PATHS ${NCCL_ROOT} PATH_SUFFIXES include NO_DEFAULT_PATH)
  find_library(NCCL_LIBRARY NAMES nccl PATHS ${NCCL_ROOT} PATH_SUFFIXES lib lib64 NO_DEFAULT_PATH)
endif()
find_path(NCCL_INCLUDE_DIR nccl.h
  HINTS $ENV{NCCL_ROOT} ${CUDAToolkit_INCLUDE_DIRS}
  PATH_SUFFIXES include)
find_library(NCCL_LIBRARY NAMES nccl
  HINTS $ENV{NCCL_ROOT} ${CUDAToolkit_LIBRARY_DIR}
  PATH_SUFFIXES lib lib64)
if(NCCL_INCLUDE_DIR AND EXISTS ${NCCL_INCLUDE_DIR}/nccl.h)
  file(STRINGS ${NCCL_INCLUDE_DIR}/nccl.h _nccl_code REGEX "^#define NCCL_VERSION_CODE")
  string(REGEX MATCH "[0-9]+" NCCL_VERSION_HEADER "${_nccl_code}")
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(NCCL REQUIRED_VARS NCCL_LIBRARY NCCL_INCLUDE_DIR
                                  VERSION_VAR NCCL_VERSION_HEADER)
if(NCCL_FOUND AND NOT TARGET NCCL::nccl)
  add_library(NCCL::nccl UNKNOWN IMPORTED)
  set_target_properties(NCCL::nccl PROPERTIES IMPORTED_LOCATION ${NCCL_LIBRARY}
                        INTERFACE_INCLUDE_DIRECTORIES ${NCCL_INCLUDE_DIR})
endif()
mark_as_advanced(NCCL_INCLUDE_DIR NCCL_LIBRARY)
