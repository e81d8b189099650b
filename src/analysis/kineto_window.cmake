# Operators detail windows recorded with Kineto (torch 2.x): the converter of the trace torch
# saves into the window's operators payload (kineto_window_converter.h) and the writer of the
# window's files (kineto_window_writer.h), called by stepscope._core. Included by
# src/analysis/CMakeLists.txt after kineto.cmake (the trace parser and flow linker).
target_sources(stepscope_analysis PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/kineto_window_converter.cc
  ${CMAKE_CURRENT_LIST_DIR}/kineto_window_writer.cc
)
target_link_libraries(stepscope_analysis PRIVATE PkgConfig::ZSTD ZLIB::ZLIB)

# Against a trace saved by torch 2.x with torch's own reading of it (tests/data/kineto, made by
# make_torch2_trace.py), the GPU traces of tests/fixtures/kineto, and hostile bytes.
stepscope_add_unittest(kineto_window_unittest
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/kineto_window_converter_unittest.cc
  LIBS stepscope::analysis PkgConfig::ZSTD ZLIB::ZLIB)
if(TARGET kineto_window_unittest)
  target_compile_definitions(kineto_window_unittest PRIVATE
    STEPSCOPE_FIXTURES_DIR="${STEPSCOPE_FIXTURES_DIR}"
    STEPSCOPE_TEST_DATA_DIR="${PROJECT_SOURCE_DIR}/tests/data")
endif()
