#!/usr/bin/env bash
# `npm run bench:batch [-- --quick]`: its own ElasticMQ and memcached on loopback, then main.ts.
#   BATCH_ELASTICMQ_PORT (default 9424), BATCH_MEMCACHED_PORT (default 11311): reused when they
#   already answer, else started here (state in .local/bench-batch/) and stopped at the end by pid.
#   BATCH_NODE_ARGS: node flags, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" with BATCH_CONTENDERS=batch.
# Needs node_modules (npm ci), Java, and ElasticMQ's classpath (resolved from Maven Central once).
set -euo pipefail
cd "$(dirname "$0")/../.."
# sqs-jobs needs Node >= 22.12: the machine's, or the LTS brought into .node/ (scripts/node.sh).
source scripts/node.sh
use_supported_node
export AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true
EMQ_PORT="${BATCH_ELASTICMQ_PORT:-9424}"
MC_PORT="${BATCH_MEMCACHED_PORT:-11311}"
STATE=.local/bench-batch
mkdir -p "$STATE"
say() { printf '[bench:batch] %s\n' "$*" >&2; }
[[ -x node_modules/.bin/tsx ]] || { say "node_modules is missing: run npm ci first"; exit 1; }

# The contenders run the built package, as users do.
npm run --silent build
source bench/lib/servers.sh
trap cleanup EXIT
ensure_elasticmq "$EMQ_PORT"
ensure_memcached "$MC_PORT"

BENCH_SERVER_PIDS="${server_pids[*]}" SQS_JOBS_ELASTICMQ_URL="http://127.0.0.1:$EMQ_PORT" SQS_JOBS_MEMCACHED="127.0.0.1:$MC_PORT" \
  timeout 900 node --expose-gc ${BATCH_NODE_ARGS:-} --import tsx bench/batch/main.ts "$@"
