#!/usr/bin/env bash
# Fuzzes basepress's loaders: each target checks the repository's project
# with one input file mutated at random, CASES times, within LIMIT seconds,
# and fails on a panic, a hang (5 s per input) or an error without a place.
#
#   fuzz/run.sh [CASES] [LIMIT]      defaults: 2000 inputs, 600 s per target
set -euo pipefail
cd "$(dirname "$0")/.."
cases=${1:-2000}
limit=${2:-600}
targets=(page_front_matter_markdown_and_variables kustomization manifest env_file image_data site_config)

cargo test --release --test integration --no-run -q
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT
failed=0
printf '%-42s %8s %9s  %s\n' target inputs seconds result
for t in "${targets[@]}"; do
  start=$(date +%s%N)
  if PROPTEST_CASES=$cases timeout "$limit" \
      cargo test -q --release --test integration "fuzz::$t" -- --exact >"$log/$t" 2>&1; then
    result=ok
  else
    result="FAILED (see below)"
    failed=1
  fi
  secs=$(( ($(date +%s%N) - start) / 1000000 ))
  printf '%-42s %8s %6d.%02d  %s\n' "$t" "$cases" $((secs / 1000)) $((secs % 1000 / 10)) "$result"
done
if ((failed)); then
  for t in "${targets[@]}"; do
    grep -q "test result: ok" "$log/$t" || { echo "== $t"; tail -40 "$log/$t"; }
  done
  exit 1
fi
