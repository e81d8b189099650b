# The dashboard timeline's level-of-detail benchmark (issue 14 §3: any zoom of a 10 M-event run in
# <= 100 ms p95 with <= 50,000 primitives), against listing the overlapping events. Included by
# benchmarks/CMakeLists.txt.
add_executable(timeline_benchmark ${CMAKE_CURRENT_LIST_DIR}/timeline_benchmark.cc)
target_link_libraries(timeline_benchmark PRIVATE stepscope::analysis)
