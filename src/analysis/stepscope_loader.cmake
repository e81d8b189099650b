# stepscope's own runs in the analysis model: the metric/phase vocabulary (vocabulary.h), the
# decoder of a run's records (run_decoder.h) and the whole run as a list of events
# (recorded_run.h), the loader of stepscope runs (stepscope_loader.h, detail_operators.h), the
# one reader of detail-window files (detail_window_files.h), the nodes of a job as one
# (clock_alignment.h, job_nodes.h) and the one entry point that loads any run (run_loader.h). Included by src/analysis/CMakeLists.txt.
target_sources(stepscope_analysis PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/vocabulary.cc
  ${CMAKE_CURRENT_LIST_DIR}/detail_operators.cc
  ${CMAKE_CURRENT_LIST_DIR}/detail_window_files.cc
  ${CMAKE_CURRENT_LIST_DIR}/gpu_stream_events.cc
  ${CMAKE_CURRENT_LIST_DIR}/run_decoder.cc
  ${CMAKE_CURRENT_LIST_DIR}/recorded_run.cc
  ${CMAKE_CURRENT_LIST_DIR}/stepscope_loader.cc
  ${CMAKE_CURRENT_LIST_DIR}/recording_losses.cc
  ${CMAKE_CURRENT_LIST_DIR}/clock_alignment.cc
  ${CMAKE_CURRENT_LIST_DIR}/job_nodes.cc
  ${CMAKE_CURRENT_LIST_DIR}/run_loader.cc
)
target_link_libraries(stepscope_analysis PRIVATE PkgConfig::ZSTD)

# Tests write runs with the real store writer (test_run_writer.h).
stepscope_add_unittest(stepscope_loader_unittests
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/vocabulary_unittest.cc
    ${CMAKE_CURRENT_LIST_DIR}/detail_window_files_unittest.cc
    ${CMAKE_CURRENT_LIST_DIR}/recorded_run_unittest.cc
    ${CMAKE_CURRENT_LIST_DIR}/stepscope_loader_unittest.cc
    ${CMAKE_CURRENT_LIST_DIR}/run_loader_unittest.cc
    ${CMAKE_CURRENT_LIST_DIR}/model_refresh_unittest.cc
    ${CMAKE_CURRENT_LIST_DIR}/clock_alignment_unittest.cc
    ${CMAKE_CURRENT_LIST_DIR}/job_nodes_unittest.cc
  LIBS stepscope::analysis stepscope::store PkgConfig::ZSTD)
