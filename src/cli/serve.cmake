# `stepscope serve` (docs/dashboard.md): the dashboard server of src/server, with ctl's code for
# the Control page.
target_sources(stepscope_cli_lib PRIVATE ${CMAKE_CURRENT_LIST_DIR}/serve_command.cc)
target_link_libraries(stepscope_cli_lib PUBLIC stepscope::server)
