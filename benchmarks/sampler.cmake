# The system sampler's cost benchmark (SPEC §6: <= 0.5 % of one core at 100 ms).
# Included from benchmarks/CMakeLists.txt: include(${CMAKE_CURRENT_LIST_DIR}/sampler.cmake)
# Run: sampler_cost_benchmark [--seconds=10] [--repetitions=5] [--interval_ms=100] [--perf_counters]
add_executable(sampler_cost_benchmark ${CMAKE_CURRENT_LIST_DIR}/sampler_cost_benchmark.cc)
target_link_libraries(sampler_cost_benchmark PRIVATE stepscope::sampler)
