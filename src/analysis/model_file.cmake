# The model file (model.stepscope) that imported runs are stored in.
target_sources(stepscope_analysis PRIVATE ${CMAKE_CURRENT_LIST_DIR}/model_file.cc)
target_link_libraries(stepscope_analysis PRIVATE PkgConfig::ZSTD)

stepscope_add_unittest(model_file_unittests
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/model_file_unittest.cc
  LIBS stepscope::analysis PkgConfig::ZSTD)
