# stepscope's own rules (RULES.md §native) and what they share.
target_sources(stepscope_rules PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/step_facts.cc
  ${CMAKE_CURRENT_LIST_DIR}/rank_step_times.cc
  ${CMAKE_CURRENT_LIST_DIR}/instance_capacities.cc
  ${CMAKE_CURRENT_LIST_DIR}/instance_catalog.cc
  ${CMAKE_CURRENT_LIST_DIR}/instance_fit.cc
  ${CMAKE_CURRENT_LIST_DIR}/run_cost.cc
  ${CMAKE_CURRENT_LIST_DIR}/step_time_breakdown_rule.cc
  ${CMAKE_CURRENT_LIST_DIR}/dataloader_starvation_rule.cc
  ${CMAKE_CURRENT_LIST_DIR}/cpu_headroom.cc
  ${CMAKE_CURRENT_LIST_DIR}/gpu_idle_rule.cc
  ${CMAKE_CURRENT_LIST_DIR}/step_device_work.cc
  ${CMAKE_CURRENT_LIST_DIR}/kernel_launches.cc
  ${CMAKE_CURRENT_LIST_DIR}/gpu_architecture.cc
  ${CMAKE_CURRENT_LIST_DIR}/launch_bound_rule.cc
  ${CMAKE_CURRENT_LIST_DIR}/pageable_copy_rule.cc
  ${CMAKE_CURRENT_LIST_DIR}/low_precision_opportunity_rule.cc
  ${CMAKE_CURRENT_LIST_DIR}/sync_heavy_rule.cc
  ${CMAKE_CURRENT_LIST_DIR}/memory_near_capacity_rule.cc
  ${CMAKE_CURRENT_LIST_DIR}/straggler_rule.cc
  ${CMAKE_CURRENT_LIST_DIR}/right_sizing_rule.cc
  ${CMAKE_CURRENT_LIST_DIR}/gpu_throttling_rule.cc
  ${CMAKE_CURRENT_LIST_DIR}/gpu_errors_rule.cc
)
# A price catalogue may be TOML (run_cost.h LoadPriceCatalog).
find_path(STEPSCOPE_RULES_TOML_INCLUDE_DIR toml++/toml.h REQUIRED)
target_include_directories(stepscope_rules PRIVATE ${STEPSCOPE_RULES_TOML_INCLUDE_DIR})
stepscope_add_unittest(native_rules_unittests
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/native_rules_unittest.cc ${CMAKE_CURRENT_LIST_DIR}/run_cost_unittest.cc
          ${CMAKE_CURRENT_LIST_DIR}/instance_catalog_unittest.cc ${CMAKE_CURRENT_LIST_DIR}/instance_fit_unittest.cc
          ${CMAKE_CURRENT_LIST_DIR}/gpu_rules_unittest.cc ${CMAKE_CURRENT_LIST_DIR}/gpu_architecture_unittest.cc
          ${CMAKE_CURRENT_LIST_DIR}/gpu_health_rules_unittest.cc
  LIBS stepscope::rules)
# The GPU rules on real PyTorch profiler traces, through the Kineto importer (a test-only link).
stepscope_add_unittest(gpu_rules_kineto_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/gpu_rules_kineto_test.cc
  LIBS stepscope::rules stepscope::importer_kineto)
if(TARGET gpu_rules_kineto_test)
  target_compile_definitions(gpu_rules_kineto_test PRIVATE
    STEPSCOPE_KINETO_FIXTURES_DIR="${STEPSCOPE_FIXTURES_DIR}/kineto")
endif()
