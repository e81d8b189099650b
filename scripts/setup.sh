#!/usr/bin/env bash
# Installs what stepscope needs on Debian 12, builds it and installs it twice:
# - with CMake into /usr/local: the `stepscope` command on PATH, and the package where Debian's
#   /usr/bin/python3 imports it (the torch 1.13 lane, python3-torch);
# - as a wheel (`pip install .`, pyproject.toml) into the project's virtual environment .venv,
#   made from /usr/bin/python3 with the exact versions of requirements/dev.txt: torch 2.x from
#   PyPI, Lightning, transformers, accelerate and the test tools (the torch 2.x lane; the demo).
# Both interpreters are CPython 3.11, so the test suite's one build of stepscope._core (in the
# build folder) serves both lanes. Idempotent, and quick when everything is already done.
#
# Environment:
#   STEPSCOPE_BUILD_DIR   build folder, relative to the repo root or absolute (default: build)
#   STEPSCOPE_BUILD_TYPE  CMake build type (default: RelWithDebInfo)
#   STEPSCOPE_CMAKE_ARGS  extra arguments appended to the cmake configure line
#   STEPSCOPE_VENV        the virtual environment (default: .venv in the repo root)
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
  python3 python3-dev python3-venv python3-torch python3-pybind11 python3-numpy python3-pytest
  clang libclang-rt-14-dev procps ccache valgrind stress prometheus
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

# The virtual environment: made once from Debian's interpreter, refilled whenever
# requirements/dev.txt changes (a stamp holds the hash of the file it was filled from). Made
# before the build folder is configured: CMake registers the torch 2.x test lane only when the
# venv's interpreter exists.
venv=${STEPSCOPE_VENV:-$PWD/.venv}
if [ ! -x "$venv/bin/python" ]; then
  log "creating the virtual environment $venv..."
  /usr/bin/python3 -m venv "$venv" || die "cannot create $venv (is python3-venv installed?)"
fi
lock_hash=$(sha256sum requirements/dev.txt | cut -d' ' -f1)
if [ "$(cat "$venv/.stepscope-requirements" 2>/dev/null)" != "$lock_hash" ]; then
  log "installing requirements/dev.txt into $venv (torch 2.x is about 3 GB the first time)..."
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
    -r requirements/dev.txt </dev/null >&2 || die "pip could not install requirements/dev.txt into $venv"
  echo "$lock_hash" >"$venv/.stepscope-requirements"
fi

# The same objects are compiled for the build folder and for the wheel: ccache makes the second
# compile a copy (paths below the repo root are hashed relative to it).
if command -v ccache >/dev/null; then
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
  export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
fi

build_dir=${STEPSCOPE_BUILD_DIR:-build}
build_type=${STEPSCOPE_BUILD_TYPE:-RelWithDebInfo}
read -r -a extra_args <<<"${STEPSCOPE_CMAKE_ARGS:-}"
launcher_args=()
[ -n "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ] &&
  launcher_args=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
configure_args=(
  -DCMAKE_BUILD_TYPE="$build_type"
  "${launcher_args[@]}"
  -DPython3_EXECUTABLE=/usr/bin/python3
  -DSTEPSCOPE_VENV_PYTHON="$venv/bin/python"
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

# The wheel, as a user builds it (`pip install .`), without build isolation so that it builds
# with the pinned scikit-build-core and pybind11; its CMake folder is build-wheel/. Built into
# build-wheel/dist/ first so that tests/packaging can install the same file elsewhere.
# The compilers of the build folder: Python's sysconfig would name x86_64-linux-gnu-g++, which
# ccache hashes as another compiler.
log "building the stepscope wheel and installing it into $venv..."
rm -rf build-wheel/dist
CC=$(command -v cc) CXX=$(command -v c++) "$venv/bin/python" -m pip wheel --quiet \
  --disable-pip-version-check --no-input --no-build-isolation --no-deps -w build-wheel/dist . </dev/null >&2 ||
  die "building the wheel (pip wheel .) failed (see the output above)"
wheel=$(ls build-wheel/dist/stepscope-*.whl)
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --no-deps \
  --force-reinstall "$wheel" </dev/null >&2 || die "pip could not install $wheel into $venv"

# Check from a neutral directory with an empty environment, as a new shell would see it.
clean_env=(env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)
(cd /tmp && "${clean_env[@]}" sh -c 'command -v stepscope' >/dev/null) ||
  die "stepscope is not on PATH after install (expected in /usr/local/bin)"
(cd /tmp && "${clean_env[@]}" /usr/bin/python3 -c 'import stepscope' 2>/dev/null) ||
  die "/usr/bin/python3 cannot import stepscope after install"
(cd /tmp && "${clean_env[@]}" "$venv/bin/python" -c 'import stepscope, torch' 2>/dev/null) ||
  die "$venv/bin/python cannot import stepscope and torch after install"
[ -x "$venv/bin/stepscope" ] || die "the wheel did not install $venv/bin/stepscope"
log "done: $(command -v stepscope), and $venv/bin/stepscope with torch $("$venv/bin/python" -c 'import torch; print(torch.__version__)')"
