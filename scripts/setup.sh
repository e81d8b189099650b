#!/usr/bin/env bash
# Installs what stepscope needs on Debian 12, builds it and installs it: afterwards the
# `stepscope` command is on PATH and `/usr/bin/python3 -c 'import stepscope'` works.
# Idempotent, and quick when everything is already done.
#
# Environment:
#   STEPSCOPE_BUILD_DIR   build folder, relative to the repo root or absolute (default: build)
#   STEPSCOPE_BUILD_TYPE  CMake build type (default: RelWithDebInfo)
#   STEPSCOPE_CMAKE_ARGS  extra arguments appended to the cmake configure line
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

log() { echo "setup: $*" >&2; }
die() { echo "setup: error: $*" >&2; exit 1; }

sudo=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || die "not root and sudo is missing"
  sudo=(sudo)
fi

packages=(
  build-essential cmake ninja-build pkg-config git
  nlohmann-json3-dev libtomlplusplus-dev libsimdjson-dev libcpp-httplib-dev libcli11-dev libfmt-dev libspdlog-dev
  libzstd-dev libxxhash-dev libsqlite3-dev sqlite3
  libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-dev python3-torch python3-pybind11 python3-numpy python3-pytest
  clang libclang-rt-14-dev procps
  chromium
)
# The HTML report's front end (web/) is bundled with Node.js at build time. Debian's nodejs
# and npm only where node/npm are missing: a nodesource nodejs (which ships npm) stays as is.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  packages+=(nodejs npm)
fi

# dpkg-query names only the packages it knows about; anything not "ii" is missing.
installed=$(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' "${packages[@]}" 2>/dev/null |
  awk '$2 == "ii" { print $1 }' || true)
missing=()
for p in "${packages[@]}"; do
  grep -qxF "$p" <<<"$installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing packages: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  "${sudo[@]}" apt-get update -q </dev/null >&2
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -q --no-install-recommends "${missing[@]}" </dev/null >&2
fi

build_dir=${STEPSCOPE_BUILD_DIR:-build}
build_type=${STEPSCOPE_BUILD_TYPE:-RelWithDebInfo}
read -r -a extra_args <<<"${STEPSCOPE_CMAKE_ARGS:-}"
configure_args=(
  -DCMAKE_BUILD_TYPE="$build_type"
  -DPython3_EXECUTABLE=/usr/bin/python3
  -DCMAKE_INSTALL_MESSAGE=LAZY
  "${extra_args[@]}"
)

# Configure only when the folder is new or the arguments changed; otherwise ninja re-runs
# cmake by itself when a CMakeLists.txt changes. An existing folder keeps its generator.
stamp="$build_dir/.setup-configure-args"
if [ ! -f "$build_dir/CMakeCache.txt" ]; then
  log "configuring $build_dir ($build_type)..."
  cmake -S . -B "$build_dir" -G Ninja "${configure_args[@]}" >&2
  printf '%s\n' "${configure_args[@]}" >"$stamp"
elif [ "$(printf '%s\n' "${configure_args[@]}")" != "$(cat "$stamp" 2>/dev/null)" ]; then
  log "reconfiguring $build_dir ($build_type)..."
  cmake -S . -B "$build_dir" "${configure_args[@]}" >&2
  printf '%s\n' "${configure_args[@]}" >"$stamp"
fi

log "building..."
cmake --build "$build_dir" -j "$(nproc)" >&2 || die "build failed (see the compiler output above)"

log "installing..."
"${sudo[@]}" cmake --install "$build_dir" >&2 || die "cmake --install $build_dir failed"

# Check from a neutral directory with an empty environment, as a new shell would see it.
clean_env=(env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)
(cd /tmp && "${clean_env[@]}" sh -c 'command -v stepscope' >/dev/null) ||
  die "stepscope is not on PATH after install (expected in /usr/local/bin)"
(cd /tmp && "${clean_env[@]}" /usr/bin/python3 -c 'import stepscope' 2>/dev/null) ||
  die "/usr/bin/python3 cannot import stepscope after install"
log "done: $(command -v stepscope)"
