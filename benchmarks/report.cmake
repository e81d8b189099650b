# The report benchmark (SPEC §6 / issue 5: report of the synthetic 24 h run <= 10 s including
# analysis; HTML <= 5 MB): load-only baseline against load + rules + report model (+ HTML when
# stepscope::report_html is built), medians of repetitions in one process. Included by
# benchmarks/CMakeLists.txt.
add_executable(report_benchmark ${CMAKE_CURRENT_LIST_DIR}/report_benchmark.cc)
target_link_libraries(report_benchmark PRIVATE stepscope::report stepscope::analysis)
if(TARGET stepscope::report_html)
  target_link_libraries(report_benchmark PRIVATE stepscope::report_html)
  target_compile_definitions(report_benchmark PRIVATE STEPSCOPE_HAVE_REPORT_HTML=1)
endif()
