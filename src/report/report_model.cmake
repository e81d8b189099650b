# The report's JSON model (docs/report-model.md): built from the analysis model, the rules'
# outputs and the run's facts. Sits on the rules (STYLE.md §1: report <- rules); the CLI gathers
# the run's facts and hands them in (src/cli/report_command.h).
add_library(stepscope_report STATIC
  ${CMAKE_CURRENT_LIST_DIR}/report_model.cc
  ${CMAKE_CURRENT_LIST_DIR}/report_model_context.cc
  ${CMAKE_CURRENT_LIST_DIR}/report_model_series.cc
  ${CMAKE_CURRENT_LIST_DIR}/report_sections_detail.cc
  ${CMAKE_CURRENT_LIST_DIR}/report_sections_gpu.cc
  ${CMAKE_CURRENT_LIST_DIR}/report_sections_job.cc
  ${CMAKE_CURRENT_LIST_DIR}/report_sections_overhead.cc
  ${CMAKE_CURRENT_LIST_DIR}/report_sections_rules.cc
  ${CMAKE_CURRENT_LIST_DIR}/report_sections_steps.cc
)
add_library(stepscope::report ALIAS stepscope_report)
target_include_directories(stepscope_report PUBLIC ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(stepscope_report PUBLIC stepscope::rules stepscope::analysis stepscope::base
  nlohmann_json::nlohmann_json)

stepscope_add_unittest(report_model_unittests
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/report_model_series_unittest.cc
    ${CMAKE_CURRENT_LIST_DIR}/report_sections_unittest.cc
  LIBS stepscope::report)
