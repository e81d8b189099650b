# What the GPUs did, for the GPU page and the report: the activity and memory-operation splits
# and kernel precision (gpu_activity.h, kernel_precision.h), and the duration of each user
# annotation (annotation_durations.h). Pure over the model. Included by src/analysis/CMakeLists.txt.
target_sources(stepscope_analysis PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/annotation_durations.cc
  ${CMAKE_CURRENT_LIST_DIR}/gpu_activity.cc
  ${CMAKE_CURRENT_LIST_DIR}/kernel_precision.cc
)

stepscope_add_unittest(gpu_activity_unittests
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/annotation_durations_unittest.cc
    ${CMAKE_CURRENT_LIST_DIR}/gpu_activity_unittest.cc
    ${CMAKE_CURRENT_LIST_DIR}/kernel_precision_unittest.cc
  LIBS stepscope::analysis)
