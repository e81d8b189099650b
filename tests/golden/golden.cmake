# Golden tests of the rules: tests/golden/rules/<case>/{input,parameters.json,expected}
# (tests/golden/README.md). STEPSCOPE_REBASELINE=1 rewrites expected/.
add_executable(golden_rules_test ${CMAKE_CURRENT_LIST_DIR}/golden_rules_test.cc)
target_link_libraries(golden_rules_test PRIVATE stepscope::rules stepscope::analysis stepscope::importer_sagemaker GTest::gtest GTest::gtest_main)
target_compile_definitions(golden_rules_test PRIVATE
  STEPSCOPE_GOLDEN_CASES_DIR="${CMAKE_CURRENT_LIST_DIR}/rules")
gtest_discover_tests(golden_rules_test DISCOVERY_TIMEOUT 60 PROPERTIES LABELS golden)
