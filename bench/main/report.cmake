# collbench-report (the offline report builder) and its Google Benchmark. Included from
# bench/main/CMakeLists.txt.
if(TARGET collbench_report)
  add_executable(collbench-report ${CMAKE_CURRENT_LIST_DIR}/collbench_report.cpp)
  target_link_libraries(collbench-report PRIVATE collbench_report collbench_warnings)

  if(COLLBENCH_BUILD_BENCHMARKS)
    find_package(benchmark QUIET)
    if(benchmark_FOUND)
      # Builds the whole report from 1,000,000 synthetic result rows (see bench/report/).
      add_executable(report_bench ${PROJECT_SOURCE_DIR}/bench/report/report_bench.cpp
                                  ${PROJECT_SOURCE_DIR}/bench/report/synthetic.cpp)
      target_include_directories(report_bench PRIVATE ${PROJECT_SOURCE_DIR}/bench/report)
      target_link_libraries(report_bench PRIVATE collbench_report benchmark::benchmark collbench_warnings)
    else()
      message(STATUS "Google Benchmark not found: report_bench is not built")
    endif()
  endif()
endif()
