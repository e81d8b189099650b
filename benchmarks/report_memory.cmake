# The report's memory benchmark (issue: `stepscope report` peaks at <= 64 B per framework event
# + 16 B per system sample + 150 MB): the real command's peak RSS against reading the run and
# loading it, then each stage's own peak. Included by benchmarks/CMakeLists.txt.
# Run: report_memory_benchmark [--hours=8 --steps_per_s=30 --per-rule]
#   stepscope_child_measure  forked / executed children with their own peak RSS (child_measure.h)
add_library(stepscope_child_measure STATIC ${CMAKE_CURRENT_LIST_DIR}/child_measure.cc)
target_include_directories(stepscope_child_measure PUBLIC ${CMAKE_CURRENT_LIST_DIR})

add_executable(report_memory_benchmark ${CMAKE_CURRENT_LIST_DIR}/report_memory_benchmark.cc)
target_link_libraries(report_memory_benchmark PRIVATE stepscope_child_measure stepscope_synthetic_run
  stepscope::report stepscope::report_html stepscope::rules stepscope::analysis)
target_compile_definitions(report_memory_benchmark PRIVATE STEPSCOPE_CLI_PATH="$<TARGET_FILE:stepscope>")
add_dependencies(report_memory_benchmark stepscope)
