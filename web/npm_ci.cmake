# Installs web/'s npm dependencies exactly as package-lock.json pins them, only when the lock
# changed since the last install (a hash of it is kept in node_modules/). Run by
# src/report/html.cmake at build time:
#
#   cmake -DNPM=/usr/bin/npm -DWEB_DIR=<repo>/web -DSTAMP=<web>/node_modules/.stepscope-npm-ci -P npm_ci.cmake
#
# --prefer-offline uses npm's cache when it has the packages, so a rebuild needs no network.
cmake_minimum_required(VERSION 3.20)

file(SHA256 "${WEB_DIR}/package-lock.json" lock_hash)
if(EXISTS "${STAMP}")
  file(READ "${STAMP}" installed_hash)
  string(STRIP "${installed_hash}" installed_hash)
  if(installed_hash STREQUAL lock_hash AND EXISTS "${WEB_DIR}/node_modules/esbuild/package.json")
    file(TOUCH "${STAMP}")
    return()
  endif()
endif()

message(STATUS "npm ci in ${WEB_DIR} (package-lock.json changed)")
execute_process(
  COMMAND "${NPM}" ci --no-audit --no-fund --prefer-offline
  WORKING_DIRECTORY "${WEB_DIR}"
  RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "npm ci failed in ${WEB_DIR} (exit ${result}): see npm's output above; "
    "it needs the npm registry or a filled npm cache")
endif()
file(WRITE "${STAMP}" "${lock_hash}\n")
