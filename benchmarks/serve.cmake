# The dashboard's job-list benchmark (issue 14 §1: 200 runs list in under a second): the listing
# against reading the same manifests, medians in one process. Included by
# benchmarks/CMakeLists.txt; docs/benchmarks.md has the figures.
add_executable(serve_listing_benchmark ${CMAKE_CURRENT_LIST_DIR}/serve_listing_benchmark.cc)
target_link_libraries(serve_listing_benchmark PRIVATE stepscope_server_core)
