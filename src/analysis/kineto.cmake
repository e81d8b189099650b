# The PyTorch profiler trace importer (kineto_importer.h), included by CMakeLists.txt here.
# simdjson (On-Demand) parses the traces, zlib inflates .gz files.
find_package(simdjson REQUIRED)
find_package(ZLIB REQUIRED)
target_sources(stepscope_analysis PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/kineto_importer.cc
  ${CMAKE_CURRENT_LIST_DIR}/kineto_file_parser.cc
  ${CMAKE_CURRENT_LIST_DIR}/kineto_flow_linker.cc
  ${CMAKE_CURRENT_LIST_DIR}/trace_bytes.cc
)
target_link_libraries(stepscope_analysis PUBLIC simdjson::simdjson PRIVATE ZLIB::ZLIB)

stepscope_add_unittest(kineto_importer_unittest
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/kineto_importer_unittest.cc
  LIBS stepscope::analysis ZLIB::ZLIB)
if(TARGET kineto_importer_unittest)
  target_compile_definitions(kineto_importer_unittest PRIVATE
    STEPSCOPE_FIXTURES_DIR="${STEPSCOPE_FIXTURES_DIR}"
    STEPSCOPE_TEST_DATA_DIR="${PROJECT_SOURCE_DIR}/tests/data")
endif()
