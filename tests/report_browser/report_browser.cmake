# The HTML report in a real browser (tests/report_browser/README.md): hand-written report models
# and a real `stepscope run` rendered to HTML and opened in headless Chromium with the network
# blocked. Skipped (77) where Chromium is missing; scripts/setup.sh installs it.
if(TARGET stepscope::report_html)
  add_executable(render_report_html ${CMAKE_CURRENT_LIST_DIR}/render_report_html.cc)
  target_link_libraries(render_report_html PRIVATE stepscope::report_html)
  stepscope_add_pytest_suite(report_browser report_browser LANES torch2 LABELS browser ENVIRONMENT
    "STEPSCOPE_RENDER_HTML=$<TARGET_FILE:render_report_html>;STEPSCOPE_WEB_DIR=${PROJECT_SOURCE_DIR}/web;STEPSCOPE_REPORT_BROWSER_OUT=${CMAKE_CURRENT_BINARY_DIR}/report_browser")
endif()
