# `stepscope compare` and `stepscope summary` (docs/compare.md). Included by src/cli/CMakeLists.txt.
target_sources(stepscope_cli_lib PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/compare_command.cc
  ${CMAKE_CURRENT_LIST_DIR}/summary_command.cc
)
# compare_command.cc registers its own options (AddCompareCommand) and writes --html through the
# report's front end (src/report/html.cmake).
target_link_libraries(stepscope_cli_lib PUBLIC stepscope::compare stepscope::report_html CLI11::CLI11)

stepscope_add_unittest(summary_command_unittests
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/summary_command_unittest.cc
  LIBS stepscope_cli_lib stepscope::store PkgConfig::ZSTD)
