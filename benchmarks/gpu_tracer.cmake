# The GPU tracer's cost per activity record and its bytes at rest (issue 15 §5: <= 50 ns CPU per
# record from buffer to store, <= 8 bytes per kernel record at rest). Built where the tracer is
# (CUPTI 13 headers). Included by benchmarks/CMakeLists.txt; docs/benchmarks.md has the figures.
if(TARGET stepscope_gpu_tracer)
  add_executable(gpu_tracer_benchmark ${CMAKE_CURRENT_LIST_DIR}/gpu_tracer_benchmark.cc)
  target_link_libraries(gpu_tracer_benchmark PRIVATE stepscope::gpu_tracer stepscope::analysis stepscope::importer_common)
endif()
