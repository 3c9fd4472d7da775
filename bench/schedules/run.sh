#!/usr/bin/env bash
# `npm run bench:schedules [-- --quick]`: jobs run later than SQS's 900 s delay, kept in the job store
# against re-delayed in hops (run-at.ts), on an ElasticMQ and a DynamoDB Local of its own.
#   SCHEDULES_ELASTICMQ_PORT (default 9624), SCHEDULES_DYNAMODB_PORT (4769): reused when they already
#   answer, else started here (state in .local/bench-schedules/) and stopped at the end. ~1.5 min.
set -euo pipefail
cd "$(dirname "$0")/../.."
# sqs-jobs needs Node >= 22.12: the machine's, or the LTS brought into .node/ (scripts/node.sh).
source scripts/node.sh
use_supported_node
export AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true
EMQ_PORT="${SCHEDULES_ELASTICMQ_PORT:-9624}"
DDB_PORT="${SCHEDULES_DYNAMODB_PORT:-4769}"
STATE=.local/bench-schedules
mkdir -p "$STATE"
say() { printf '[bench:schedules] %s\n' "$*" >&2; }
[[ -x node_modules/.bin/tsx ]] || { say "node_modules is missing: run npm ci first"; exit 1; }
source bench/lib/servers.sh
trap cleanup EXIT
ensure_elasticmq "$EMQ_PORT"
ensure_dynamodb "$DDB_PORT"
SQS_JOBS_ELASTICMQ_URL="http://127.0.0.1:$EMQ_PORT" AWS_ENDPOINT_URL_DYNAMODB="http://127.0.0.1:$DDB_PORT" \
  timeout 600 node_modules/.bin/tsx bench/schedules/run-at.ts "$@"
