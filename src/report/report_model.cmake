# The report's JSON model (docs/report-model.md): built from the analysis model, the rules'
# outputs, the run's facts (run_info.h) and its Python profiles (python_profile_tables.h), and
# assembled from a run directory by run_report.h. Sits on the rules (STYLE.md §1: report <-
# rules); the CLI only parses arguments and prints (src/cli/report_command.h).
add_library(stepscope_report STATIC
  ${CMAKE_CURRENT_LIST_DIR}/report_model.cc
  ${CMAKE_CURRENT_LIST_DIR}/report_model_context.cc
  ${CMAKE_CURRENT_LIST_DIR}/report_model_series.cc
  ${CMAKE_CURRENT_LIST_DIR}/report_rule_charts.cc
  ${CMAKE_CURRENT_LIST_DIR}/report_sections_cpu_counters.cc
  ${CMAKE_CURRENT_LIST_DIR}/report_sections_detail.cc
  ${CMAKE_CURRENT_LIST_DIR}/report_sections_gpu.cc
  ${CMAKE_CURRENT_LIST_DIR}/report_sections_gpu_activity.cc
  ${CMAKE_CURRENT_LIST_DIR}/report_sections_gpu_health.cc
  ${CMAKE_CURRENT_LIST_DIR}/report_sections_gpu_idle.cc
  ${CMAKE_CURRENT_LIST_DIR}/report_sections_heatmap.cc
  ${CMAKE_CURRENT_LIST_DIR}/report_sections_job.cc
  ${CMAKE_CURRENT_LIST_DIR}/report_sections_overhead.cc
  ${CMAKE_CURRENT_LIST_DIR}/report_sections_rules.cc
  ${CMAKE_CURRENT_LIST_DIR}/report_sections_steps.cc
  ${CMAKE_CURRENT_LIST_DIR}/report_sections_verdict.cc
  ${CMAKE_CURRENT_LIST_DIR}/phase_display_names.cc
  ${CMAKE_CURRENT_LIST_DIR}/python_profile_tables.cc
  ${CMAKE_CURRENT_LIST_DIR}/run_info.cc
  ${CMAKE_CURRENT_LIST_DIR}/run_report.cc
)
add_library(stepscope::report ALIAS stepscope_report)
target_include_directories(stepscope_report PUBLIC ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(stepscope_report PUBLIC stepscope::rules stepscope::analysis stepscope::base
  nlohmann_json::nlohmann_json)

stepscope_add_unittest(report_model_unittests
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/report_model_series_unittest.cc
    ${CMAKE_CURRENT_LIST_DIR}/report_rule_charts_unittest.cc
    ${CMAKE_CURRENT_LIST_DIR}/report_sections_cpu_counters_unittest.cc
    ${CMAKE_CURRENT_LIST_DIR}/report_sections_unittest.cc
  LIBS stepscope::report)
