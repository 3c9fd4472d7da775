#!/usr/bin/env bash
# `npm run test:faults`: the fault and load suite against ElasticMQ, memcached and (for the fan-out
# test's job store) DynamoDB Local on loopback,
# at full scale (FAULTS_SCALE=full, the default here); `npm test` runs it at FAULTS_SCALE=ci.
# Starts what is not running and stops it again afterwards. Figures: .local/faults-report.json.
set -euo pipefail
cd "$(dirname "$0")/.."
# sqs-jobs needs Node >= 22.12: the machine's, or the LTS brought into .node/ (scripts/node.sh).
source scripts/node.sh
use_supported_node
export AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true
export FAULTS_SCALE="${FAULTS_SCALE:-full}"
# The tests find ElasticMQ where infra/local/elasticmq.sh starts it (SQS_JOBS_ELASTICMQ_PORT, default 9324).
export SQS_JOBS_ELASTICMQ_URL="${SQS_JOBS_ELASTICMQ_URL:-http://127.0.0.1:${SQS_JOBS_ELASTICMQ_PORT:-9324}}"
bash scripts/ensure-deps.sh
stop=()
if ! bash infra/local/elasticmq.sh status >/dev/null 2>&1; then bash infra/local/elasticmq.sh up; stop+=("infra/local/elasticmq.sh"); fi
if ! bash infra/local/stack.sh status >/dev/null 2>&1; then bash infra/local/stack.sh up; stop+=("infra/local/stack.sh"); fi
if ! bash infra/local/dynamodb.sh status >/dev/null 2>&1; then bash infra/local/dynamodb.sh up; stop+=("infra/local/dynamodb.sh"); fi
eval "$(bash infra/local/dynamodb.sh env)"
cleanup() { for s in "${stop[@]}"; do bash "$s" down || true; done; }
trap cleanup EXIT
mkdir -p .local
rm -f .local/faults-report.json
echo "[faults] scale: $FAULTS_SCALE" >&2
npx vitest run --config vitest.faults.config.ts --reporter=default --reporter=json --outputFile.json=.local/vitest-faults-report.json "$@"
