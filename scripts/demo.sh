#!/usr/bin/env bash
# Builds and installs stepscope (scripts/setup.sh), profiles the bundled example
# examples/train_cnn.py with torch 2.x under `stepscope run` (both from the project's virtual
# environment .venv, as a user who ran `pip install` there would), and prints where the report is.
#
# Usage: scripts/demo.sh [STEPSCOPE RUN OPTIONS...] [-- EXAMPLE ARGS...]
#   e.g. scripts/demo.sh -- --epochs 1
# Runs go under $STEPSCOPE_OUT (default: ./stepscope-runs in the repo root).
set -euo pipefail

run_opts=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  run_opts+=("$1")
  shift
done
[ $# -gt 0 ] && shift  # the "--"

out=${STEPSCOPE_OUT:-}
[ -n "$out" ] && out=$(realpath -m -- "$out")  # relative to the caller's directory
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${out:-$PWD/stepscope-runs}

./scripts/setup.sh
venv=${STEPSCOPE_VENV:-$PWD/.venv}

# Naming the job ourselves makes the run directory known in advance: <out>/<job>.
job="demo-$(date -u +%Y%m%dT%H%M%SZ)"
run_dir="$out/$job"
echo "demo: profiling examples/train_cnn.py as job $job..." >&2
rc=0
"$venv/bin/stepscope" run --out "$out" --job "$job" "${run_opts[@]}" -- \
  "$venv/bin/python" examples/train_cnn.py "$@" || rc=$?
if [ ! -d "$run_dir" ]; then
  echo "demo: error: stepscope run (exit code $rc) left no run directory at $run_dir" >&2
  exit $((rc ? rc : 1))
fi
[ "$rc" -eq 0 ] || echo "demo: warning: the example exited with code $rc" >&2

echo
"$venv/bin/stepscope" info "$run_dir"
echo
echo "Run directory: $run_dir"
if [ -f "$run_dir/report.html" ]; then
  echo "Report:        $run_dir/report.html (open it in any browser; it needs no network)"
else
  echo "demo: warning: no report was written; try \`stepscope report $run_dir\`" >&2
fi
exit "$rc"
