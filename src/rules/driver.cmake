# The ProfilerReport driver, the explicit list of built-in rules (RULES.md §13) and their
# configuration by users.
target_sources(stepscope_rules PRIVATE
  ${CMAKE_CURRENT_SOURCE_DIR}/configured_profiler_report.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/profiler_report.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/rule_registry.cc
)
target_link_libraries(stepscope_rules PUBLIC stepscope::base)

stepscope_add_unittest(profiler_report_unittests
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/configured_profiler_report_unittest.cc
    ${CMAKE_CURRENT_SOURCE_DIR}/profiler_report_unittest.cc
  LIBS stepscope::rules)
