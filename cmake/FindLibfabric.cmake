# FindLibfabric: locates rdma/fabric.h and libfabric: in LIBFABRIC_ROOT alone when it is set (the
# cluster's libfabric, cmake/CollbenchClusterLibraries.cmake), else pkg-config's, then the
# system's. Defines Libfabric::fabric and Libfabric_VERSION (from fabric.h).
if(LIBFABRIC_ROOT)
  find_path(Libfabric_INCLUDE_DIR rdma/fabric.h PATHS ${LIBFABRIC_ROOT} PATH_SUFFIXES include
            NO_DEFAULT_PATH)
  find_library(Libfabric_LIBRARY NAMES fabric PATHS ${LIBFABRIC_ROOT} PATH_SUFFIXES lib lib64
               NO_DEFAULT_PATH)
else()
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(PC_LIBFABRIC QUIET libfabric)
  endif()
endif()
find_path(Libfabric_INCLUDE_DIR rdma/fabric.h HINTS ${PC_LIBFABRIC_INCLUDE_DIRS}
          PATH_SUFFIXES include)
find_library(Libfabric_LIBRARY NAMES fabric HINTS ${PC_LIBFABRIC_LIBRARY_DIRS}
             PATH_SUFFIXES lib lib64)
# The version of the headers found, which pkg-config may not describe.
if(Libfabric_INCLUDE_DIR AND EXISTS ${Libfabric_INCLUDE_DIR}/rdma/fabric.h)
  file(STRINGS ${Libfabric_INCLUDE_DIR}/rdma/fabric.h _fi_version
       REGEX "^#define FI_(MAJOR|MINOR)_VERSION[ \t]+[0-9]+")
  string(REGEX REPLACE ".*FI_MAJOR_VERSION[ \t]+([0-9]+).*" "\\1" _fi_major "${_fi_version}")
  string(REGEX REPLACE ".*FI_MINOR_VERSION[ \t]+([0-9]+).*" "\\1" _fi_minor "${_fi_version}")
  set(Libfabric_VERSION "${_fi_major}.${_fi_minor}")
endif()
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Libfabric REQUIRED_VARS Libfabric_LIBRARY Libfabric_INCLUDE_DIR
                                  VERSION_VAR Libfabric_VERSION)
if(Libfabric_FOUND AND NOT TARGET Libfabric::fabric)
  add_library(Libfabric::fabric UNKNOWN IMPORTED)
  set_target_properties(Libfabric::fabric PROPERTIES IMPORTED_LOCATION ${Libfabric_LIBRARY}
                        INTERFACE_INCLUDE_DIRECTORIES ${Libfabric_INCLUDE_DIR})
endif()
mark_as_advanced(Libfabric_INCLUDE_DIR Libfabric_LIBRARY)
