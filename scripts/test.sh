#!/usr/bin/env bash
# `npm test`: installs what is missing, starts the local stack if it is not running (and stops
# it again afterwards), then runs every unit and integration test. Extra arguments go to vitest.
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
trap cleanup EXIT
eval "$(bash infra/local/stack.sh env)"

mkdir -p .local
status=0
npx vitest run --reporter=default --reporter=json --outputFile.json=.local/vitest-report.json "$@" || status=$?
# One plain closing line that any CI can read.
node -e '
  const r = JSON.parse(require("fs").readFileSync(".local/vitest-report.json", "utf8"));
  const skipped = r.numPendingTests + r.numTodoTests;
  console.log(`${r.numPassedTests} passed, ${r.numFailedTests} failed, ${skipped} skipped`);
' || true
exit $status
