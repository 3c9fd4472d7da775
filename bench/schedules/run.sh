#!/usr/bin/env bash
# `npm run bench:schedules [-- --quick]`: jobs run later than SQS's 900 s delay, kept in the job store
# against re-delayed in hops (run-at.ts); then the schedules' own figures, under load and under a
# SIGKILL loop beside BullMQ's job schedulers (occurrences.ts), on servers of its own on loopback:
#   SCHEDULES_ELASTICMQ_PORT (default 9624), SCHEDULES_DYNAMODB_PORT (4769), SCHEDULES_MEMCACHED_PORT
#   (11724): reused when they already answer, else started here (state in .local/bench-schedules/)
#   and stopped at the end; SCHEDULES_REDIS_PORT (6624): a redis-server (Debian's, installed by
#   scripts/ensure-redis.sh) always started here, without persistence, and stopped at the end.
#   ~9 min (--quick: ~4).
set -euo pipefail
cd "$(dirname "$0")/../.."
# sqs-jobs needs Node >= 22.12: the machine's, or the LTS brought into .node/ (scripts/node.sh).
source scripts/node.sh
use_supported_node
export AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true
EMQ_PORT="${SCHEDULES_ELASTICMQ_PORT:-9624}"
DDB_PORT="${SCHEDULES_DYNAMODB_PORT:-4769}"
MC_PORT="${SCHEDULES_MEMCACHED_PORT:-11724}"
REDIS_PORT="${SCHEDULES_REDIS_PORT:-6624}"
STATE=.local/bench-schedules
mkdir -p "$STATE"
say() { printf '[bench:schedules] %s\n' "$*" >&2; }
[[ -x node_modules/.bin/tsx ]] || { say "node_modules is missing: run npm ci first"; exit 1; }
[[ -d node_modules/bullmq && -d node_modules/ioredis ]] || { say "BullMQ (the peer) is missing: run npm ci first"; exit 1; }
bash scripts/ensure-redis.sh
source bench/lib/servers.sh
trap cleanup EXIT
ensure_elasticmq "$EMQ_PORT"
ensure_dynamodb "$DDB_PORT"
ensure_memcached "$MC_PORT"
if (exec 3<>"/dev/tcp/127.0.0.1/$REDIS_PORT") 2>/dev/null; then say "127.0.0.1:$REDIS_PORT is taken: set SCHEDULES_REDIS_PORT"; exit 1; fi
"${SQS_JOBS_REDIS_SERVER:-redis-server}" --bind 127.0.0.1 --port "$REDIS_PORT" --save '' --appendonly no --dir "$STATE" >"$STATE/redis.log" 2>&1 &
started+=("$!")
for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$REDIS_PORT") 2>/dev/null && break; sleep 0.1; done
export SQS_JOBS_ELASTICMQ_URL="http://127.0.0.1:$EMQ_PORT" AWS_ENDPOINT_URL_DYNAMODB="http://127.0.0.1:$DDB_PORT"
timeout 600 node_modules/.bin/tsx bench/schedules/run-at.ts "$@"
SCHEDULES_MEMCACHED="127.0.0.1:$MC_PORT" SCHEDULES_REDIS_PORT="$REDIS_PORT" \
  timeout 900 node_modules/.bin/tsx bench/schedules/occurrences.ts "$@"
