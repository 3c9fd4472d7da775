#!/usr/bin/env bash
# The CDK app's tests: synthesise offline and assert the template. infra/aws is its own package
# (aws-cdk-lib is large), installed here on first use.
set -euo pipefail
cd "$(dirname "$0")/../infra/aws"
if [[ ! -d node_modules || package-lock.json -nt node_modules/.package-lock.json ]]; then
  echo "[deps] npm ci (infra/aws)" >&2
  npm ci --no-audit --no-fund
fi
exec npx vitest run --reporter=default --reporter=json --outputFile.json=../../.local/vitest-infra-report.json "$@"
