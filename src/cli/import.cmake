# `stepscope import`: SageMaker profiler output and PyTorch profiler traces into imported runs.
target_sources(stepscope_cli_lib PRIVATE ${CMAKE_CURRENT_LIST_DIR}/import_command.cc)
target_link_libraries(stepscope_cli_lib PRIVATE stepscope::importer_sagemaker stepscope::importer_kineto)
stepscope_add_unittest(import_command_unittests SOURCES ${CMAKE_CURRENT_LIST_DIR}/import_command_unittest.cc
  LIBS stepscope_cli_lib)
