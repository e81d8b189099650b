# `stepscope alerts`: Prometheus alerting rules equivalent to the built-in system rules.
target_sources(stepscope_cli_lib PRIVATE
  ${CMAKE_CURRENT_SOURCE_DIR}/alerts_command.cc
)
target_link_libraries(stepscope_cli_lib PUBLIC stepscope::prometheus)
