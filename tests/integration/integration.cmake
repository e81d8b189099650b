# Integration tests of the store and the recorder together (included by tests/CMakeLists.txt).
# Both run recordings in child processes: the recorder allows one session per process. Both read
# the run back as every reader does, through the analysis layer (analysis/recorded_run.h).

# crash_safety_test execs itself (`--crash-child`) as the recording child, so it has its own
# main() and links gtest without gtest_main.
add_executable(crash_safety_test ${CMAKE_CURRENT_LIST_DIR}/crash_safety_test.cc)
target_link_libraries(crash_safety_test PRIVATE stepscope::recorder stepscope::store stepscope::analysis GTest::gtest)
gtest_discover_tests(crash_safety_test DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 600 LABELS integration)

stepscope_add_unittest(corrupt_run_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/corrupt_run_test.cc
  LIBS stepscope::recorder stepscope::store stepscope::analysis)
