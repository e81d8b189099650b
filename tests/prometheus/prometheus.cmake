# Prometheus: promtool checks the rules `stepscope alerts` writes and runs their unit tests
# (alerts_test.yml). Included by tests/CMakeLists.txt; promtool comes with Debian's prometheus
# package (scripts/setup.sh installs it).
add_test(NAME prometheus_alert_rules
         COMMAND bash ${CMAKE_CURRENT_LIST_DIR}/promtool_test.sh $<TARGET_FILE:stepscope>
                 ${CMAKE_CURRENT_BINARY_DIR}/prometheus_alert_rules)
set_tests_properties(prometheus_alert_rules PROPERTIES LABELS integration TIMEOUT 120)

# A real Prometheus scraping two running `stepscope run --metrics-port` nodes, with the generated
# alerts (test_prometheus.py); the GPU is the fake NVML's.
if(STEPSCOPE_BUILD_PYTHON)
  stepscope_add_pytest_suite(prometheus_end_to_end prometheus LANES torch2 LABELS integration
    ENVIRONMENT "STEPSCOPE_FAKE_NVML=$<TARGET_FILE:stepscope_fake_nvml>")
endif()
