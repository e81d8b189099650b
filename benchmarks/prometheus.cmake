# The Prometheus endpoint's cost (issue 16 §3: <= 0.1 % of one core at a 15 s scrape interval),
# beside the run's own system stream in the same process. docs/benchmarks.md has the figures.
# Run: prometheus_exposition_benchmark [--polls N] [--scrapes N] [--repetitions R]
pkg_check_modules(CPP_HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
add_executable(prometheus_exposition_benchmark ${CMAKE_CURRENT_LIST_DIR}/prometheus_exposition_benchmark.cc)
target_link_libraries(prometheus_exposition_benchmark PRIVATE stepscope::prometheus stepscope::launcher
  PkgConfig::CPP_HTTPLIB)
