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
  ${CMAKE_CURRENT_LIST_DIR}/sync_heavy_rule.cc
  ${CMAKE_CURRENT_LIST_DIR}/memory_near_capacity_rule.cc
  ${CMAKE_CURRENT_LIST_DIR}/straggler_rule.cc
  ${CMAKE_CURRENT_LIST_DIR}/right_sizing_rule.cc
)
# A price catalogue may be TOML (run_cost.h LoadPriceCatalog).
find_path(STEPSCOPE_RULES_TOML_INCLUDE_DIR toml++/toml.h REQUIRED)
target_include_directories(stepscope_rules PRIVATE ${STEPSCOPE_RULES_TOML_INCLUDE_DIR})
stepscope_add_unittest(native_rules_unittests
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/native_rules_unittest.cc ${CMAKE_CURRENT_LIST_DIR}/run_cost_unittest.cc
          ${CMAKE_CURRENT_LIST_DIR}/instance_catalog_unittest.cc ${CMAKE_CURRENT_LIST_DIR}/instance_fit_unittest.cc
  LIBS stepscope::rules)
