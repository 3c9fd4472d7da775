#!/usr/bin/env bash
# `npm run bench:events [-- --quick] [-- --events N --rate R]`: publish-to-done latency and calls per
# event, SNS fan-out to 4 subscriber jobs against 4 direct enqueues, on a LocalStack of its own.
#   BENCH_EVENTS_LOCALSTACK_PORT (default 4590): LocalStack (SQS + SNS) on 127.0.0.1 there, through
#   infra/local/stack.sh with its state (pid file, log, files) in .local/bench-events/, so it never
#   touches the developer's LocalStack (4566) or its pid file. Reused when one already answers there
#   (with SNS), else started here and stopped at the end. Started here with SQS_DISABLE_CLOUDWATCH_METRICS=1
#   (LocalStack's own AWS/SQS metrics make each call ~3x slower, DESIGN.md), which stack.sh passes
#   through. No memcached: the dedupe lock is off. ~3 min (300 events per path at 2/s); --quick ~40 s.
set -euo pipefail
cd "$(dirname "$0")/../.."
# sqs-jobs needs Node >= 22.12: the machine's, or the LTS brought into .node/ (scripts/node.sh).
source scripts/node.sh
use_supported_node
export AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true
PORT="${BENCH_EVENTS_LOCALSTACK_PORT:-4590}"
URL="http://127.0.0.1:$PORT"
STATE="$PWD/.local/bench-events"
mkdir -p "$STATE"
say() { printf '[bench:events] %s\n' "$*" >&2; }
[[ -x node_modules/.bin/tsx ]] || { say "node_modules is missing: run npm ci first"; exit 1; }

stack() { SQS_JOBS_LOCALSTACK_PORT="$PORT" SQS_JOBS_STATE_DIR="$STATE" bash infra/local/stack.sh "$@"; }
health() { curl -fsS --max-time 2 "$URL/_localstack/health" 2>/dev/null; }

started=0
cleanup() { if ((started)); then stack down localstack || true; fi; }
trap cleanup EXIT

if health >/dev/null; then
  health | grep -Eq '"sns": *"(available|running)"' || { say "the LocalStack on $URL has no SNS: stop it or pick another BENCH_EVENTS_LOCALSTACK_PORT"; exit 1; }
  say "reusing the LocalStack that answers on $URL"
  export BENCH_EVENTS_LOCALSTACK="reused: already running"
else
  started=1
  SQS_DISABLE_CLOUDWATCH_METRICS=1 stack up localstack
  export BENCH_EVENTS_LOCALSTACK="started for this run, SQS_DISABLE_CLOUDWATCH_METRICS=1"
fi

AWS_ENDPOINT_URL="$URL" AWS_REGION=us-east-1 AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test \
  timeout 900 node_modules/.bin/tsx bench/events/main.ts "$@"
