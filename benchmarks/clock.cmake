# The tick clock's accuracy against CLOCK_MONOTONIC (base/clock.h); not asserted in unit tests.
# Included from benchmarks/CMakeLists.txt. Run: clock_benchmark [google benchmark flags]
add_executable(clock_benchmark ${CMAKE_CURRENT_LIST_DIR}/clock_benchmark.cc)
target_link_libraries(clock_benchmark PRIVATE stepscope::base benchmark::benchmark)
