# `stepscope export RUN --format chrome|sqlite|csv` (docs/exports.md). The exporters live in
# src/export (stepscope::export); this adds the command.
target_sources(stepscope_cli_lib PRIVATE ${CMAKE_CURRENT_LIST_DIR}/export_command.cc)
target_link_libraries(stepscope_cli_lib PUBLIC stepscope::export)
