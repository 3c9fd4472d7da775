#!/usr/bin/env bash
# `npm run bench:fairness`: ElasticMQ and memcached on loopback (reused when they already answer,
# else started here and stopped at the end, by pid), then bench/fairness/main.ts.
#   SQS_JOBS_ELASTICMQ_PORT (default 9324), SQS_JOBS_MEMCACHED_PORT (default 11211);
#   FAIRNESS_SCALE, FAIRNESS_MODES, FAIRNESS_SCENARIOS: see main.ts.
set -euo pipefail
cd "$(dirname "$0")/../.."
# sqs-jobs needs Node >= 22.12: the machine's, or the LTS brought into .node/ (scripts/node.sh).
source scripts/node.sh
use_supported_node
export AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true
EMQ_PORT="${SQS_JOBS_ELASTICMQ_PORT:-9324}"
MC_PORT="${SQS_JOBS_MEMCACHED_PORT:-11211}"
mkdir -p bench/fairness/results
started=()
cleanup() { for pid in "${started[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap cleanup EXIT

if ! SQS_JOBS_ELASTICMQ_PORT=$EMQ_PORT bash infra/local/elasticmq.sh status >/dev/null 2>&1; then
  # elasticmq.sh keeps one pid file for every port: keep whoever's pid was there, note ours.
  saved=$(cat .local/elasticmq.pid 2>/dev/null || true)
  SQS_JOBS_ELASTICMQ_PORT=$EMQ_PORT bash infra/local/elasticmq.sh up
  started+=("$(cat .local/elasticmq.pid)")
  if [[ -n "$saved" ]]; then echo "$saved" >.local/elasticmq.pid; else rm -f .local/elasticmq.pid; fi
fi
if ! (exec 3<>"/dev/tcp/127.0.0.1/$MC_PORT") 2>/dev/null; then
  memcached -l 127.0.0.1 -p "$MC_PORT" -U 0 -u nobody -m 256 >bench/fairness/results/memcached.log 2>&1 &
  started+=("$!")
  for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$MC_PORT") 2>/dev/null && break; sleep 0.1; done
fi
SQS_JOBS_ELASTICMQ_URL="http://127.0.0.1:$EMQ_PORT" SQS_JOBS_MEMCACHED="127.0.0.1:$MC_PORT" node_modules/.bin/tsx bench/fairness/main.ts
