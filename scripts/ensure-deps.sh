#!/usr/bin/env bash
# Install npm packages (and build) when node_modules is missing or older than the lockfile.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ! -d node_modules || package-lock.json -nt node_modules/.package-lock.json ]]; then
  echo "[deps] npm ci" >&2
  source scripts/retry.sh
  retry npm ci --no-audit --no-fund
fi
if [[ ! -f dist/src/index.js ]]; then npm run build >&2; fi
