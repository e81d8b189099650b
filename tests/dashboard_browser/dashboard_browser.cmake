# The live dashboard in a real browser (tests/dashboard_browser/README.md): a real `stepscope
# serve` over real runs, driven in headless Chromium. Skipped (77) where Chromium is missing;
# scripts/setup.sh installs it.
stepscope_add_pytest_suite(dashboard_browser dashboard_browser LANES torch2 LABELS browser ENVIRONMENT
  "STEPSCOPE_WEB_DIR=${PROJECT_SOURCE_DIR}/web;STEPSCOPE_DASHBOARD_BROWSER_OUT=${CMAKE_CURRENT_BINARY_DIR}/dashboard_browser")
