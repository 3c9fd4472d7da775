#!/usr/bin/env bash
# `npm run bench:admission [-- --quick]`: its own ElasticMQ and memcached on loopback, then main.ts.
#   ADMISSION_ELASTICMQ_PORT (default 9624), ADMISSION_MEMCACHED_PORT (11611): reused when they
#   already answer, else started here (state in .local/bench-admission/) and stopped at the end.
# Needs node_modules (npm ci), Java (and Maven for ElasticMQ's first run), memcached.
set -euo pipefail
cd "$(dirname "$0")/../.."
# sqs-jobs needs Node >= 22.12: the machine's, or the LTS brought into .node/ (scripts/node.sh).
source scripts/node.sh
use_supported_node
export AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true
EMQ_PORT="${ADMISSION_ELASTICMQ_PORT:-9624}"
MC_PORT="${ADMISSION_MEMCACHED_PORT:-11611}"
STATE=.local/bench-admission
mkdir -p "$STATE"
say() { printf '[bench:admission] %s\n' "$*" >&2; }
[[ -x node_modules/.bin/tsx ]] || { say "node_modules is missing: run npm ci first"; exit 1; }
source bench/lib/servers.sh
trap cleanup EXIT
ensure_elasticmq "$EMQ_PORT"
ensure_memcached "$MC_PORT"
SQS_JOBS_ELASTICMQ_URL="http://127.0.0.1:$EMQ_PORT" SQS_JOBS_MEMCACHED="127.0.0.1:$MC_PORT" \
  timeout 1200 node_modules/.bin/tsx bench/admission/main.ts "$@"
