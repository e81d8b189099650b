# Fuzzer of the SageMaker readers (src/importers/sagemaker/sagemaker_*_reader.h). Seeds: fuzz/corpus/sagemaker_importer,
# small files of tests/fixtures/sagemaker with the reader byte prepended (docs/fuzzing.md).
stepscope_add_fuzzer(sagemaker_importer_fuzzer SOURCES sagemaker_importer_fuzzer.cc LIBS stepscope::importer_sagemaker
  SEEDS ${STEPSCOPE_FUZZ_CORPUS_DIR}/sagemaker_importer)
