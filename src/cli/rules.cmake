# `stepscope rules` and the online rule evaluation of `stepscope run` (RULES.md §13).
target_sources(stepscope_cli_lib PRIVATE
  ${CMAKE_CURRENT_SOURCE_DIR}/rules_command.cc
  ${CMAKE_CURRENT_SOURCE_DIR}/online_rules.cc
)

stepscope_add_unittest(rules_command_unittests
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/rules_command_unittest.cc ${CMAKE_CURRENT_SOURCE_DIR}/online_rules_unittest.cc
  LIBS stepscope_cli_lib)
