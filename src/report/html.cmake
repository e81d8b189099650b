# The self-contained HTML report: web/ (TypeScript, Chart.js) is type-checked and bundled with
# esbuild at build time, and the bundle is embedded into a generated C++ source compiled into
# stepscope::report_html (report_html.h). Needs Node.js and npm at build time only.
find_program(STEPSCOPE_NODE node)
find_program(STEPSCOPE_NPM npm)
if(NOT STEPSCOPE_NODE OR NOT STEPSCOPE_NPM)
  message(FATAL_ERROR "The HTML report bundles web/ with Node.js, but `node` or `npm` is not on PATH: "
    "install nodejs (scripts/setup.sh does), or pass -DSTEPSCOPE_NODE=... -DSTEPSCOPE_NPM=...")
endif()

set(STEPSCOPE_WEB_DIR ${PROJECT_SOURCE_DIR}/web)
set(web_out ${CMAKE_CURRENT_BINARY_DIR}/web)
set(web_sources
  ${STEPSCOPE_WEB_DIR}/src/charts.ts
  ${STEPSCOPE_WEB_DIR}/src/compare.ts
  ${STEPSCOPE_WEB_DIR}/src/details.ts
  ${STEPSCOPE_WEB_DIR}/src/dom.ts
  ${STEPSCOPE_WEB_DIR}/src/main.ts
  ${STEPSCOPE_WEB_DIR}/src/model.ts
  ${STEPSCOPE_WEB_DIR}/src/report.css
  ${STEPSCOPE_WEB_DIR}/src/sections/bottlenecks.ts
  ${STEPSCOPE_WEB_DIR}/src/sections/overview.ts
  ${STEPSCOPE_WEB_DIR}/src/sections/rules.ts
  ${STEPSCOPE_WEB_DIR}/src/sections/stepscope.ts
  ${STEPSCOPE_WEB_DIR}/src/sections/training.ts
)

# node_modules lives in web/ (shared by build folders, ignored by git); the stamp inside it
# holds the hash of package-lock.json, so `npm ci` runs again only when the lock changes or
# node_modules is gone.
set(npm_ci_stamp ${STEPSCOPE_WEB_DIR}/node_modules/.stepscope-npm-ci)
add_custom_command(OUTPUT ${npm_ci_stamp}
  COMMAND ${CMAKE_COMMAND} -DNPM=${STEPSCOPE_NPM} -DWEB_DIR=${STEPSCOPE_WEB_DIR} -DSTAMP=${npm_ci_stamp}
          -P ${STEPSCOPE_WEB_DIR}/npm_ci.cmake
  DEPENDS ${STEPSCOPE_WEB_DIR}/package-lock.json ${STEPSCOPE_WEB_DIR}/package.json ${STEPSCOPE_WEB_DIR}/npm_ci.cmake
  COMMENT "Installing web/ dependencies (npm ci)"
  VERBATIM)

add_custom_command(OUTPUT ${web_out}/report.js ${web_out}/report.css
  COMMAND ${STEPSCOPE_NODE} ${STEPSCOPE_WEB_DIR}/build.mjs --out ${web_out}
  DEPENDS ${web_sources} ${STEPSCOPE_WEB_DIR}/build.mjs ${STEPSCOPE_WEB_DIR}/tsconfig.json ${npm_ci_stamp}
  WORKING_DIRECTORY ${STEPSCOPE_WEB_DIR}
  COMMENT "Type-checking and bundling web/ (tsc, esbuild)"
  VERBATIM)

add_custom_command(OUTPUT ${web_out}/report_html_assets.cc
  COMMAND ${CMAKE_COMMAND} -DSCRIPT=${web_out}/report.js -DSTYLE=${web_out}/report.css
          -DOUTPUT=${web_out}/report_html_assets.cc -P ${STEPSCOPE_WEB_DIR}/embed_assets.cmake
  DEPENDS ${web_out}/report.js ${web_out}/report.css ${STEPSCOPE_WEB_DIR}/embed_assets.cmake
  COMMENT "Embedding the web/ bundle into report_html_assets.cc"
  VERBATIM)

add_library(stepscope_report_html STATIC
  ${CMAKE_CURRENT_SOURCE_DIR}/report_html.cc
  ${web_out}/report_html_assets.cc
)
add_library(stepscope::report_html ALIAS stepscope_report_html)
target_include_directories(stepscope_report_html PUBLIC ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(stepscope_report_html PUBLIC stepscope::base nlohmann_json::nlohmann_json)

stepscope_add_unittest(report_html_unittests
  SOURCES ${CMAKE_CURRENT_SOURCE_DIR}/report_html_unittest.cc
  LIBS stepscope::report_html)
