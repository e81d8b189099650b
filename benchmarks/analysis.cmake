# The analysis benchmark (SPEC §6: analysis + report of a 24 h, 8-GPU, 500 ms job <= 10 s and
# <= 1 GB RAM) and the synthetic run it measures. Included by benchmarks/CMakeLists.txt.
#   make_synthetic_run   writes the synthetic stepscope run and its SageMaker twin
#   analysis_benchmark   generates (or reuses) the run; load / rules / load+rules medians, peak
#                        RSS and model bytes, against reading + decompressing the same bytes
add_library(stepscope_synthetic_run STATIC ${CMAKE_CURRENT_LIST_DIR}/synthetic_run.cc)
target_include_directories(stepscope_synthetic_run PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(stepscope_synthetic_run PUBLIC stepscope::base stepscope::store)

add_executable(make_synthetic_run ${CMAKE_CURRENT_LIST_DIR}/make_synthetic_run.cc)
target_link_libraries(make_synthetic_run PRIVATE stepscope_synthetic_run)

add_executable(analysis_benchmark ${CMAKE_CURRENT_LIST_DIR}/analysis_benchmark.cc)
# FilesUnder comes from child_measure.h (report_memory.cmake).
target_link_libraries(analysis_benchmark PRIVATE stepscope_synthetic_run stepscope_child_measure stepscope::rules
  stepscope::analysis
  stepscope::importer_sagemaker stepscope::store PkgConfig::ZSTD)

# A small run (2 min, 4 cores, 2 GPUs) loaded both ways: exact counts.
stepscope_add_unittest(synthetic_run_unittests
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/synthetic_run_unittest.cc
  LIBS stepscope_synthetic_run stepscope::analysis stepscope::importer_sagemaker)
