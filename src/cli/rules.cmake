# `stepscope rules` (RULES.md §13); the online evaluation of `stepscope run` is the launcher's.
target_sources(stepscope_cli_lib PRIVATE
  ${CMAKE_CURRENT_SOURCE_DIR}/rules_command.cc
)

stepscope_add_unittest(rules_command_unittests
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/rules_command_unittest.cc
  LIBS stepscope_cli_lib)
