# The doctor's probes and command (bench/doctor), on this machine: net plugins built here stand
# in for aws-ofi-nccl (one that loads, one whose dependency is missing, one without the symbol),
# and the command runs on the fixture trees and under mpirun with emulated hosts.
set(_plugins ${CMAKE_CURRENT_BINARY_DIR}/net-plugins)
set(_hidden ${CMAKE_CURRENT_BINARY_DIR}/hidden-dependency)
add_library(doctor_plugin_dependency SHARED plugins/dependency.c)
set_target_properties(doctor_plugin_dependency PROPERTIES
  OUTPUT_NAME doctor_missing_dependency LIBRARY_OUTPUT_DIRECTORY ${_hidden})
add_library(doctor_plugin_ofi SHARED plugins/fake_net_plugin.c)
set_target_properties(doctor_plugin_ofi PROPERTIES
  OUTPUT_NAME nccl-net-fakeofi LIBRARY_OUTPUT_DIRECTORY ${_plugins})
add_library(doctor_plugin_old SHARED plugins/fake_net_plugin.c)
target_compile_definitions(doctor_plugin_old PRIVATE "FAKE_NETWORK=\"AWS Libfabric\""
  FAKE_SYMBOL=ncclNetPlugin_v6 "FAKE_BANNER=\"NET/OFI Initializing aws-ofi-nccl 1.7.4-aws\"")
set_target_properties(doctor_plugin_old PROPERTIES
  OUTPUT_NAME nccl-net-fakeold LIBRARY_OUTPUT_DIRECTORY ${_plugins})
add_library(doctor_plugin_broken SHARED plugins/fake_net_plugin.c)
target_compile_definitions(doctor_plugin_broken PRIVATE FAKE_NEEDS_DEPENDENCY)
target_link_libraries(doctor_plugin_broken PRIVATE doctor_plugin_dependency)
# No run path: the dependency is found only where a test puts its folder on the search path.
set_target_properties(doctor_plugin_broken PROPERTIES
  OUTPUT_NAME nccl-net-broken LIBRARY_OUTPUT_DIRECTORY ${_plugins} SKIP_BUILD_RPATH ON)
add_library(doctor_plugin_nosymbol SHARED plugins/no_symbols.c)
set_target_properties(doctor_plugin_nosymbol PROPERTIES
  OUTPUT_NAME nccl-net-nosymbol LIBRARY_OUTPUT_DIRECTORY ${_plugins})
add_custom_target(doctor_test_plugins DEPENDS doctor_plugin_ofi doctor_plugin_old
                  doctor_plugin_broken doctor_plugin_nosymbol)

add_executable(doctor_probe_tests probe_test.cpp library_checks_test.cpp binding_checks_test.cpp)
target_link_libraries(doctor_probe_tests PRIVATE collbench_doctor_probes collbench_kernels
                      GTest::gtest_main collbench_warnings)
add_dependencies(doctor_probe_tests doctor_test_plugins)
target_compile_definitions(doctor_probe_tests PRIVATE
  DOCTOR_PLUGIN_DIR="${_plugins}" DOCTOR_HIDDEN_DIR="${_hidden}")
gtest_discover_tests(doctor_probe_tests PROPERTIES LABELS doctor TIMEOUT 60
                     ENVIRONMENT "LD_LIBRARY_PATH=${_plugins}")

if(TARGET collbench)
  collbench_python_tests(doctor.command test_doctor_command.py
    TESTS Fixtures.test_each_fixture_host_reports_its_hardware
          Fixtures.test_a_port_down_fails_and_names_the_device
          Fixtures.test_json_validates_against_the_schema
          Fixtures.test_strict_fails_on_warnings
          Plugins.test_the_plugin_nccl_would_load_is_named_with_its_version
          Plugins.test_the_two_commonest_ways_efa_goes_unused_are_named_on_a_p5
          Plugins.test_the_libraries_collbench_loaded_against_the_clusters
          Plugins.test_a_plugin_that_cannot_load_is_a_failure
          Usage.test_bad_options_exit_2_with_one_line
          Usage.test_json_file_is_written_whole_or_not_at_all
          Usage.test_write_failures_exit_3
          Hosts.test_emulated_hosts_that_differ_are_named
    LABELS doctor mpi
    ENV "COLLBENCH=$<TARGET_FILE:collbench>" "DOCTOR_PLUGIN_DIR=${_plugins}"
        "DOCTOR_HIDDEN_DIR=${_hidden}" "COLLBENCH_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
    PROPERTIES TIMEOUT 120)
endif()
