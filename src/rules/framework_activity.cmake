# The framework-event aggregation shared by the rules (RULES.md §11, §12).
target_sources(stepscope_rules PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/framework_activity.cc)

stepscope_add_unittest(framework_activity_unittests
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/framework_activity_unittest.cc
  LIBS stepscope::rules)
