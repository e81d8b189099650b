# Golden tests of the whole report model (tests/report_golden/README.md): SageMaker fixtures
# imported in process, and a small stepscope run written by the real store writer, against
# expected/<case>.json. STEPSCOPE_REBASELINE=1 rewrites expected/. Included by src/cli/report.cmake
# (the stepscope case is assembled by report::BuildRunReport, as `stepscope report` does).
if(NOT STEPSCOPE_BUILD_TESTS)
  return()
endif()
add_executable(report_golden_test ${CMAKE_CURRENT_LIST_DIR}/report_golden_test.cc)
target_link_libraries(report_golden_test PRIVATE stepscope::report stepscope::rules stepscope::analysis
  stepscope::importer_sagemaker stepscope::importer_kineto PkgConfig::ZSTD GTest::gtest GTest::gtest_main)
target_compile_definitions(report_golden_test PRIVATE
  STEPSCOPE_REPORT_GOLDEN_DIR="${CMAKE_CURRENT_LIST_DIR}/expected"
  STEPSCOPE_FIXTURES_DIR="${STEPSCOPE_FIXTURES_DIR}"
  STEPSCOPE_RULES_GOLDEN_DIR="${PROJECT_SOURCE_DIR}/tests/golden/rules"
  STEPSCOPE_KINETO_FIXTURES_DIR="${PROJECT_SOURCE_DIR}/tests/fixtures/kineto")
gtest_discover_tests(report_golden_test DISCOVERY_TIMEOUT 60 PROPERTIES LABELS golden)
