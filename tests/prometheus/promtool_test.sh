#!/usr/bin/env bash
# The alerting rules of `stepscope alerts` are valid Prometheus rules (promtool check rules) and
# each fires on its scenario and stays quiet on a healthy series (promtool test rules,
# alerts_test.yml). Usage: promtool_test.sh STEPSCOPE_CLI WORK_DIR
set -euo pipefail
cli=$1
work=$2
here=$(cd "$(dirname "$0")" && pwd)
command -v promtool >/dev/null || { echo "promtool is missing: install Debian's prometheus package (scripts/setup.sh does)" >&2; exit 1; }
rm -rf "$work" && mkdir -p "$work"
"$cli" alerts -o "$work/stepscope-alerts.yml"
cp "$here/alerts_test.yml" "$work/"
promtool check rules "$work/stepscope-alerts.yml"
promtool test rules "$work/alerts_test.yml"
# A parameter changes the rule it belongs to: with threshold_p95=20 a 30 % GPU is no longer low.
"$cli" alerts --rule LowGPUUtilization.threshold_p95=20 -o "$work/tuned.yml"
grep -q 'stepscope_gpu_util_percent\[250s\]) < 20' "$work/tuned.yml"
# A parameter Prometheus cannot express is a usage error naming it.
if "$cli" alerts --rule StepOutlier.stddev=2.7 >/dev/null 2>"$work/err.txt"; then
  echo "stepscope alerts accepted StepOutlier.stddev=2.7" >&2; exit 1
fi
grep -q 'StepOutlier.stddev: 2.7' "$work/err.txt"
echo "promtool: rules valid, every alert test passed"
