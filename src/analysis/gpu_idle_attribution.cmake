# Each step's time on each GPU of its rank and the causes of the GPU's idle time
# (gpu_idle_attribution.h), over gpu_activity.h's "each instant once" split. Pure over the model.
# Included by src/analysis/CMakeLists.txt.
target_sources(stepscope_analysis PRIVATE ${CMAKE_CURRENT_LIST_DIR}/gpu_idle_attribution.cc)

stepscope_add_unittest(gpu_idle_attribution_unittests
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/gpu_idle_attribution_unittest.cc
  LIBS stepscope::analysis)
