#!/usr/bin/env bash
# Runs the whole test suite N times in a row (default 3) while `stress` keeps every core busy, as issue 11
# asks before calling the suite green on a loaded machine. Needs Debian's `stress` (apt-get install stress)
# and, for the PostgreSQL half, TEST_DATABASE_URL. Each run's TAP summary goes to
# test-results/under-load-<n>.log; the script exits non-zero if any run failed.
#
#   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test scripts/suite-under-load.sh [runs]
set -uo pipefail
cd "$(dirname "$0")/.."
runs="${1:-3}"
command -v stress >/dev/null || { echo "suite-under-load: needs stress (apt-get install stress)" >&2; exit 2; }
mkdir -p test-results
stress --cpu "$(nproc)" >/dev/null 2>&1 &
load=$!
trap 'kill $load 2>/dev/null' EXIT
failed=0
for i in $(seq 1 "$runs"); do
  start=$(date +%s)
  npm test >"test-results/under-load-$i.log" 2>&1
  rc=$?
  summary=$(grep -E '^# (tests|pass|fail|cancelled) ' "test-results/under-load-$i.log" | tr '\n' ' ')
  echo "run $i of $runs: exit $rc in $(( $(date +%s) - start )) s; $summary"
  [ "$rc" -eq 0 ] || failed=1
done
exit "$failed"
