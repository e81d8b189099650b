# SageMaker Debugger profiler-output import (shared/FORMATS.md §1): file readers, the importer,
# and their tests against tests/fixtures/sagemaker.
find_package(ZLIB REQUIRED)

target_sources(stepscope_analysis PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/gzip_text.cc
  ${CMAKE_CURRENT_LIST_DIR}/json_document.cc
  ${CMAKE_CURRENT_LIST_DIR}/sagemaker_importer.cc
  ${CMAKE_CURRENT_LIST_DIR}/sagemaker_system_reader.cc
  ${CMAKE_CURRENT_LIST_DIR}/sagemaker_trace_reader.cc
)
target_link_libraries(stepscope_analysis PRIVATE ZLIB::ZLIB)

stepscope_add_unittest(sagemaker_unittests
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/sagemaker_system_reader_unittest.cc
    ${CMAKE_CURRENT_LIST_DIR}/sagemaker_trace_reader_unittest.cc
    ${CMAKE_CURRENT_LIST_DIR}/sagemaker_importer_unittest.cc
  LIBS stepscope::analysis)
if(TARGET sagemaker_unittests)
  target_compile_definitions(sagemaker_unittests PRIVATE
    STEPSCOPE_FIXTURES_DIR="${STEPSCOPE_FIXTURES_DIR}")
endif()
