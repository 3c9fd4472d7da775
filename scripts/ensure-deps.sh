#!/usr/bin/env bash
# Install npm packages (and build) when node_modules is missing or older than the lockfile.
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ ! -d node_modules || package-lock.json -nt node_modules/.package-lock.json ]]; then
  echo "[deps] npm ci" >&2
  # A registry connection reset fails the whole install: up to three tries, 10 s apart.
  for try in 1 2 3; do
    if npm ci --no-audit --no-fund; then break; fi
    if ((try == 3)); then exit 1; fi
    echo "[deps] npm ci failed (try $try of 3); trying again in 10 s" >&2
    sleep 10
  done
fi
if [[ ! -f dist/src/index.js ]]; then npm run build >&2; fi
