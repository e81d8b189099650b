# The SageMaker system-metric rules (shared/RULES.md §1-4, 7, 8, 10) and their helpers.
target_sources(stepscope_rules PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/system_totals.cc
  ${CMAKE_CURRENT_LIST_DIR}/series_history.cc
  ${CMAKE_CURRENT_LIST_DIR}/system_snapshots.cc
  ${CMAKE_CURRENT_LIST_DIR}/system_findings.cc
  ${CMAKE_CURRENT_LIST_DIR}/cpu_bottleneck_rule.cc
  ${CMAKE_CURRENT_LIST_DIR}/io_bottleneck_rule.cc
  ${CMAKE_CURRENT_LIST_DIR}/low_gpu_utilization_rule.cc
  ${CMAKE_CURRENT_LIST_DIR}/batch_size_rule.cc
  ${CMAKE_CURRENT_LIST_DIR}/gpu_memory_increase_rule.cc
  ${CMAKE_CURRENT_LIST_DIR}/load_balancing_rule.cc
  ${CMAKE_CURRENT_LIST_DIR}/overall_system_usage_rule.cc
)

stepscope_add_unittest(system_rules_unittests
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/system_rules_unittest.cc ${CMAKE_CURRENT_LIST_DIR}/bottleneck_rules_unittest.cc
          ${CMAKE_CURRENT_LIST_DIR}/series_history_unittest.cc
  LIBS stepscope::rules stepscope::importer_sagemaker)
if(TARGET system_rules_unittests)
  target_compile_definitions(system_rules_unittests PRIVATE
    STEPSCOPE_FIXTURES_DIR="${STEPSCOPE_FIXTURES_DIR}")
endif()
