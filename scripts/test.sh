#!/usr/bin/env bash
# `npm test`: installs what is missing, starts the local stack if it is not running (and stops
# it again afterwards), then runs every unit and integration test, the CDK app's offline synth
# tests and the fault/load suite at CI scale. Extra arguments go to vitest (and skip the last two).
set -euo pipefail
cd "$(dirname "$0")/.."
export AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true

bash scripts/ensure-deps.sh

started=0
if ! bash infra/local/stack.sh status >/dev/null 2>&1; then
  bash infra/local/stack.sh up
  started=1
fi
cleanup() { if [[ $started == 1 ]]; then bash infra/local/stack.sh down; fi; }
rm -f .local/vitest-report.json .local/vitest-infra-report.json .local/vitest-faults-report.json
trap cleanup EXIT
eval "$(bash infra/local/stack.sh env)"

mkdir -p .local
status=0
npx vitest run --reporter=default --reporter=json --outputFile.json=.local/vitest-report.json "$@" || status=$?
if [[ $# -eq 0 ]]; then
  # The CDK app's offline synth tests (their own package, installed on first use).
  bash scripts/test-infra.sh || status=$?
  # The fault and load suite, at the reduced scale that fits CI (`npm run test:faults` for full).
  FAULTS_SCALE=ci bash scripts/faults.sh || status=$?
fi
# One plain closing line that any CI can read, over every report written by this run.
node -e '
  const fs = require("fs");
  let passed = 0, failed = 0, skipped = 0;
  for (const f of [".local/vitest-report.json", ".local/vitest-infra-report.json", ".local/vitest-faults-report.json"]) {
    if (!fs.existsSync(f)) continue;
    const r = JSON.parse(fs.readFileSync(f, "utf8"));
    passed += r.numPassedTests; failed += r.numFailedTests; skipped += r.numPendingTests + r.numTodoTests;
  }
  console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
' || true
exit $status
