#!/usr/bin/env bash
# Builds and installs stepscope (scripts/setup.sh), then runs the whole test suite with ctest,
# which also runs the Python tests. Extra arguments go to ctest, e.g. `-R store -V`.
# Honours STEPSCOPE_BUILD_DIR like setup.sh.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
./scripts/setup.sh
exec ctest --test-dir "${STEPSCOPE_BUILD_DIR:-build}" --output-on-failure -j2 "$@"
