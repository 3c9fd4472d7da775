#!/usr/bin/env bash
# `npm run bench:lambda [-- --quick]`: sqs-jobs' Lambda handler against AWS Lambda Powertools'
# batch + idempotency utilities, both in one process (main.ts), on servers of its own on loopback:
#   LAMBDA_ELASTICMQ_PORT (default 9791), LAMBDA_DYNAMODB_PORT (4791): reused when they already
#   answer, else started here (state in .local/bench-lambda/) and stopped at the end. The handlers
#   run from src/ through tsx (their CPU is the code as it is now; tsx only transpiles), with
#   --expose-gc so that each side's batch starts from a collected heap (cpu.ts); the cold-load part
#   bundles both with esbuild and runs the bundles in plain node processes. ~35 s (--quick: ~20 s).
set -euo pipefail
cd "$(dirname "$0")/../.."
# sqs-jobs needs Node >= 22.12: the machine's, or the LTS brought into .node/ (scripts/node.sh).
source scripts/node.sh
use_supported_node
export AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true
EMQ_PORT="${LAMBDA_ELASTICMQ_PORT:-9791}"
DDB_PORT="${LAMBDA_DYNAMODB_PORT:-4791}"
STATE=.local/bench-lambda
mkdir -p "$STATE"
say() { printf '[bench:lambda] %s\n' "$*" >&2; }
[[ -x node_modules/.bin/tsx ]] || { say "node_modules is missing: run npm ci first"; exit 1; }
[[ -d node_modules/@aws-lambda-powertools/batch && -d node_modules/@aws-lambda-powertools/idempotency ]] \
  || { say "Powertools (the peer) is missing: run npm ci first"; exit 1; }
for port in "$EMQ_PORT" "$DDB_PORT"; do
  case "$port" in
    4566 | 4567 | 4569 | 11211) say "port $port belongs to the test stack: set LAMBDA_*_PORT"; exit 1 ;;
  esac
done
source bench/lib/servers.sh
trap cleanup EXIT
ensure_elasticmq "$EMQ_PORT"
ensure_dynamodb "$DDB_PORT"
LAMBDA_SQS="http://127.0.0.1:$EMQ_PORT" LAMBDA_DYNAMODB="http://127.0.0.1:$DDB_PORT" \
  timeout --foreground --kill-after=10 600 node --expose-gc --import tsx bench/lambda/main.ts "$@"
