# collbench doctor's system facts and hardware checks (CTest label "doctor"): /sys and /proc read
# from fixture trees that fixtures/make_trees.py writes at test time, healthy and broken.
if(NOT TARGET collbench_doctor)
  return()
endif()

add_executable(doctor_system_tests system_facts_test.cpp hardware_checks_test.cpp)
target_link_libraries(doctor_system_tests PRIVATE collbench_doctor GTest::gtest_main
                      collbench_warnings)
# The PCI topology tests check the library's internal helper directly.
target_include_directories(doctor_system_tests PRIVATE ${PROJECT_SOURCE_DIR}/harness/doctor/src)
target_compile_definitions(doctor_system_tests PRIVATE
  COLLBENCH_DOCTOR_PYTHON="${PYTHON3}"
  COLLBENCH_DOCTOR_MAKE_TREES="${CMAKE_CURRENT_SOURCE_DIR}/fixtures/make_trees.py")
gtest_discover_tests(doctor_system_tests
  PROPERTIES LABELS doctor TIMEOUT 120
  DISCOVERY_TIMEOUT 30)
