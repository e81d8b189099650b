# The Kineto importer's and the operators-window converter's fuzzers (included by
# fuzz/CMakeLists.txt). Seeds: small traces from tests/fixtures/kineto (decompressed, and one
# still gzip) and tests/data/kineto;
# `ninja kineto_fuzz_seeds` writes them to <build>/fuzz/corpus/kineto. Dictionary:
# fuzz/kineto.dict. How to run: docs/importers.md, "PyTorch profiler traces".
# The replay tests read the fixtures as they are (the importer takes gzip too).
set(_kineto_replay_seeds ${STEPSCOPE_FIXTURES_DIR}/kineto/triton_example_triton_example.json.gz
    ${STEPSCOPE_FIXTURES_DIR}/kineto/cpu_only_rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz
    ${PROJECT_SOURCE_DIR}/tests/data/kineto/legacy_torch113.json
    ${PROJECT_SOURCE_DIR}/tests/data/kineto/torch2_cpu_mlp.pt.trace.json.gz)
stepscope_add_fuzzer(kineto_importer_fuzzer SOURCES kineto_importer_fuzzer.cc LIBS stepscope::importer_kineto
  SEEDS ${_kineto_replay_seeds})

# The converter of operators detail windows' traces (kineto_window_converter.h): same seeds.
stepscope_add_fuzzer(kineto_window_fuzzer SOURCES kineto_window_fuzzer.cc LIBS stepscope::importer_kineto
  SEEDS ${_kineto_replay_seeds})
if(NOT STEPSCOPE_BUILD_FUZZERS)
  return()
endif()

set(_kineto_fixtures ${STEPSCOPE_FIXTURES_DIR}/kineto)
set(_kineto_seed_dir ${CMAKE_CURRENT_BINARY_DIR}/corpus/kineto)
add_custom_target(kineto_fuzz_seeds
  COMMAND ${CMAKE_COMMAND} -E make_directory ${_kineto_seed_dir}
  COMMAND sh -c "zcat \"$0\" > \"$1\"" ${_kineto_fixtures}/triton_example_triton_example.json.gz
          ${_kineto_seed_dir}/triton.json
  COMMAND sh -c "zcat \"$0\" > \"$1\"" ${_kineto_fixtures}/cpu_only_rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz
          ${_kineto_seed_dir}/cpu_only.json
  COMMAND ${CMAKE_COMMAND} -E copy ${_kineto_fixtures}/triton_example_triton_example.json.gz
          ${_kineto_seed_dir}/triton.json.gz
  COMMAND ${CMAKE_COMMAND} -E copy ${PROJECT_SOURCE_DIR}/tests/data/kineto/legacy_torch113.json
          ${_kineto_seed_dir}/legacy.json
  COMMAND sh -c "zcat \"$0\" > \"$1\"" ${PROJECT_SOURCE_DIR}/tests/data/kineto/torch2_cpu_mlp.pt.trace.json.gz
          ${_kineto_seed_dir}/torch2_cpu_mlp.json
  COMMENT "Writing the Kineto fuzzer's seeds to ${_kineto_seed_dir}"
  VERBATIM)
