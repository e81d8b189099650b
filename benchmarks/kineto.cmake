# The Kineto importer's benchmark (included by benchmarks/CMakeLists.txt).
#   kineto_ingest_benchmark  MB/s of KinetoImporter on decompressed PyTorch profiler traces (per
#                            core, CPU time), end to end with gzip, and simdjson's raw DOM parse
#                            of the same bytes as the baseline; default input tests/fixtures/kineto
add_executable(kineto_ingest_benchmark ${CMAKE_CURRENT_LIST_DIR}/kineto_ingest_benchmark.cc)
target_link_libraries(kineto_ingest_benchmark PRIVATE stepscope::importer_kineto stepscope::importer_common)
target_compile_definitions(kineto_ingest_benchmark PRIVATE
  STEPSCOPE_FIXTURES_DIR="${STEPSCOPE_FIXTURES_DIR}")
