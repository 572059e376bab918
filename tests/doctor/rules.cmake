# The environment rules, the comparison across hosts and the doctor's output (table, JSON, exit
# code). The table's golden file is tests/doctor/golden/; COLLBENCH_UPDATE_GOLDEN=1 rewrites it.
add_executable(doctor_rules_tests env_rules_test.cpp cross_host_test.cpp doctor_output_test.cpp)
target_link_libraries(doctor_rules_tests PRIVATE collbench_doctor GTest::gtest_main
                      collbench_warnings)
target_compile_definitions(doctor_rules_tests PRIVATE
  COLLBENCH_DOCTOR_GOLDEN="${CMAKE_CURRENT_SOURCE_DIR}/golden"
  COLLBENCH_DOCTOR_SCHEMA="${PROJECT_SOURCE_DIR}/results/schema/collbench-doctor.schema.json"
  COLLBENCH_DOCTOR_VALIDATOR="${CMAKE_CURRENT_SOURCE_DIR}/validate_doctor_json.py"
  COLLBENCH_PYTHON3="${PYTHON3}")
gtest_discover_tests(doctor_rules_tests PROPERTIES LABELS doctor TIMEOUT 60 DISCOVERY_TIMEOUT 30)
