#!/usr/bin/env bash
# `npm run docs:trace`: draws docs/trace.svg and .png, the picture of one trace in docs/guide/tracing.md, from a
# real run: its own ElasticMQ, memcached and DynamoDB Local on loopback, then picture.ts.
#   TRACE_ELASTICMQ_PORT (default 9724), TRACE_MEMCACHED_PORT (11711), TRACE_DYNAMODB_PORT (4769):
#   reused when they already answer, else started here (state in .local/bench-otel/) and stopped at the end.
# Needs node_modules (npm ci), Java (+ javac and Maven for DynamoDB Local's first run), memcached.
set -euo pipefail
cd "$(dirname "$0")/../.."
# sqs-jobs needs Node >= 22.12: the machine's, or the LTS brought into .node/ (scripts/node.sh).
source scripts/node.sh
use_supported_node
export AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true
EMQ_PORT="${TRACE_ELASTICMQ_PORT:-9724}"
MC_PORT="${TRACE_MEMCACHED_PORT:-11711}"
DDB_PORT="${TRACE_DYNAMODB_PORT:-4769}"
STATE=.local/bench-otel
mkdir -p "$STATE"
say() { printf '[docs:trace] %s\n' "$*" >&2; }
[[ -x node_modules/.bin/tsx ]] || { say "node_modules is missing: run npm ci first"; exit 1; }
source bench/lib/servers.sh
trap cleanup EXIT
ensure_elasticmq "$EMQ_PORT"
ensure_memcached "$MC_PORT"
ensure_dynamodb "$DDB_PORT"
SQS_JOBS_ELASTICMQ_URL="http://127.0.0.1:$EMQ_PORT" SQS_JOBS_MEMCACHED="127.0.0.1:$MC_PORT" \
  AWS_ENDPOINT_URL_DYNAMODB="http://127.0.0.1:$DDB_PORT" \
  timeout 300 node_modules/.bin/tsx bench/otel/picture.ts "$@"
