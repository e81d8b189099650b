# Fuzzer of the SageMaker readers (src/analysis/sagemaker_*_reader.h). Seeds: the files of
# tests/fixtures/sagemaker with the reader byte prepended (docs/fuzzing.md).
add_executable(sagemaker_importer_fuzzer sagemaker_importer_fuzzer.cc)
target_link_libraries(sagemaker_importer_fuzzer PRIVATE stepscope::analysis)
target_link_options(sagemaker_importer_fuzzer PRIVATE -fsanitize=fuzzer)
