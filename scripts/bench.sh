#!/usr/bin/env bash
# `npm run bench`: ElasticMQ and memcached on loopback, then bench/run.ts. Stops what it started.
set -euo pipefail
cd "$(dirname "$0")/.."
# sqs-jobs needs Node >= 22.12: the machine's, or the LTS brought into .node/ (scripts/node.sh).
source scripts/node.sh
use_supported_node
export AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true
bash scripts/ensure-deps.sh
# The contenders run the built package, as users do.
npm run --silent build
stop=()
if ! bash infra/local/elasticmq.sh status >/dev/null 2>&1; then bash infra/local/elasticmq.sh up; stop+=("bash infra/local/elasticmq.sh down"); fi
# memcached only: an idle LocalStack would take CPU from the contenders on the same cores.
if ! bash infra/local/stack.sh status memcached >/dev/null 2>&1; then bash infra/local/stack.sh up memcached; stop+=("bash infra/local/stack.sh down memcached"); fi
cleanup() { for s in "${stop[@]}"; do $s || true; done; }
trap cleanup EXIT
node_modules/.bin/tsx bench/run.ts
