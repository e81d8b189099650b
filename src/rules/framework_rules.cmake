# The SageMaker framework-event rules (RULES.md §5, 6, 9, 11).
target_sources(stepscope_rules PRIVATE
  ${CMAKE_CURRENT_SOURCE_DIR}/step_outlier_rule.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/dataloader_rule.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/max_initialization_time_rule.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/overall_framework_metrics_rule.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/sorted_runs.cc
)

stepscope_add_unittest(sorted_runs_unittests
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/sorted_runs_unittest.cc
  LIBS stepscope::rules)
stepscope_add_unittest(step_outlier_exactness_unittests
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/step_outlier_exactness_unittest.cc
  LIBS stepscope::rules)

stepscope_add_unittest(framework_rules_unittests
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/framework_rules_unittest.cc
  LIBS stepscope::rules stepscope::importer_sagemaker)
if(TARGET framework_rules_unittests)
  target_compile_definitions(framework_rules_unittests PRIVATE
    STEPSCOPE_FIXTURES_DIR="${STEPSCOPE_FIXTURES_DIR}")
endif()
