#!/usr/bin/env bash
# `npm run bench:fanout [-- --quick]`: its own ElasticMQ, memcached and DynamoDB Local on loopback,
# then main.ts.
#   FANOUT_ELASTICMQ_PORT (default 9524), FANOUT_MEMCACHED_PORT (11511), FANOUT_DYNAMODB_PORT (4669):
#   reused when they already answer, else started here (state in .local/bench-fanout/; DynamoDB
#   Local through infra/local/dynamodb.sh on that port) and stopped at the end.
# Needs node_modules (npm ci), Java (+ javac and Maven for DynamoDB Local's first run), memcached.
set -euo pipefail
cd "$(dirname "$0")/../.."
# sqs-jobs needs Node >= 22.12: the machine's, or the LTS brought into .node/ (scripts/node.sh).
source scripts/node.sh
use_supported_node
export AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true
EMQ_PORT="${FANOUT_ELASTICMQ_PORT:-9524}"
MC_PORT="${FANOUT_MEMCACHED_PORT:-11511}"
DDB_PORT="${FANOUT_DYNAMODB_PORT:-4669}"
STATE=.local/bench-fanout
mkdir -p "$STATE"
say() { printf '[bench:fanout] %s\n' "$*" >&2; }
[[ -x node_modules/.bin/tsx ]] || { say "node_modules is missing: run npm ci first"; exit 1; }

# The throughput runs use the built package, as users do.
npm run --silent build
source bench/lib/servers.sh
trap cleanup EXIT
ensure_elasticmq "$EMQ_PORT"
ensure_memcached "$MC_PORT"
ensure_dynamodb "$DDB_PORT"

SQS_JOBS_ELASTICMQ_URL="http://127.0.0.1:$EMQ_PORT" SQS_JOBS_MEMCACHED="127.0.0.1:$MC_PORT" \
  AWS_ENDPOINT_URL_DYNAMODB="http://127.0.0.1:$DDB_PORT" \
  timeout 1800 node_modules/.bin/tsx bench/fanout/main.ts "$@"
