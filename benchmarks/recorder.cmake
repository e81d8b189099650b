# The recorder's and the store's benchmarks (included by benchmarks/CMakeLists.txt).
#   recorder_benchmark      ns per annotation begin+end, enabled/disabled, with baselines
#                           (Google Benchmark); `--callgrind` mode for instruction counts
#   store_size_benchmark    bytes at rest per framework event and per system sample
add_executable(recorder_benchmark ${CMAKE_CURRENT_LIST_DIR}/recorder_benchmark.cc)
target_link_libraries(recorder_benchmark PRIVATE stepscope::recorder benchmark::benchmark)

add_executable(store_size_benchmark ${CMAKE_CURRENT_LIST_DIR}/store_size_benchmark.cc)
# Reads the run back as every reader does (analysis/run_decoder.h) to count events and samples.
target_link_libraries(store_size_benchmark PRIVATE stepscope::recorder stepscope::store stepscope::analysis)
