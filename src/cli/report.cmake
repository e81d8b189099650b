# `stepscope report` (docs/report-model.md): gathers a run's report-model inputs and renders the
# HTML with stepscope::report_html (src/report/html.cmake).
target_sources(stepscope_cli_lib PRIVATE ${CMAKE_CURRENT_LIST_DIR}/report_command.cc)
target_link_libraries(stepscope_cli_lib PUBLIC stepscope::report stepscope::report_html)

# Golden tests of the whole report model (tests/report_golden/README.md).
include(${PROJECT_SOURCE_DIR}/tests/report_golden/report_golden.cmake OPTIONAL)
