#!/usr/bin/env bash
# `npm run bench:keys [-- --quick]`: what keys on enqueue (singleton, throttle, debounce) cost in
# DynamoDB and SQS calls and capacity units, per enqueue and per run, beside a plain enqueue and a
# `track: true` one in the same run (main.ts), on servers of its own on loopback:
#   KEYS_ELASTICMQ_PORT (default 9744), KEYS_DYNAMODB_PORT (4789), KEYS_MEMCACHED_PORT (11744):
#   reused when they already answer, else started here (state in .local/bench-keys/) and stopped at
#   the end. Producer and workers run in this one process from src/ through tsx: the bench counts
#   calls on their SDK clients, not CPU, so the build's speed does not matter here. ~1 min.
set -euo pipefail
cd "$(dirname "$0")/../.."
# sqs-jobs needs Node >= 22.12: the machine's, or the LTS brought into .node/ (scripts/node.sh).
source scripts/node.sh
use_supported_node
export AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true
EMQ_PORT="${KEYS_ELASTICMQ_PORT:-9744}"
DDB_PORT="${KEYS_DYNAMODB_PORT:-4789}"
MC_PORT="${KEYS_MEMCACHED_PORT:-11744}"
STATE=.local/bench-keys
mkdir -p "$STATE"
say() { printf '[bench:keys] %s\n' "$*" >&2; }
[[ -x node_modules/.bin/tsx ]] || { say "node_modules is missing: run npm ci first"; exit 1; }
for port in "$EMQ_PORT" "$DDB_PORT" "$MC_PORT"; do
  case "$port" in
    4566 | 4567 | 4569 | 11211) say "port $port belongs to the test stack: set KEYS_*_PORT"; exit 1 ;;
    9734 | 4779 | 11734) say "port $port belongs to bench:pause: set KEYS_*_PORT"; exit 1 ;;
  esac
done
source bench/lib/servers.sh
trap cleanup EXIT
ensure_elasticmq "$EMQ_PORT"
ensure_dynamodb "$DDB_PORT"
ensure_memcached "$MC_PORT"
KEYS_SQS="http://127.0.0.1:$EMQ_PORT" KEYS_DYNAMODB="http://127.0.0.1:$DDB_PORT" KEYS_MEMCACHED="127.0.0.1:$MC_PORT" \
  timeout --foreground --kill-after=10 300 node_modules/.bin/tsx bench/keys/main.ts "$@"
