#!/usr/bin/env bash
# `npm run demo`: installs what is missing, brings up the local stack (LocalStack by default;
# SQS_JOBS_STACK=moto for moto), and runs the demo: queues, two workers, a burst of jobs, live
# progress, a summary, a fan-out import with its status read live from the job store (DynamoDB
# Local), then `sqs-jobs stats` (on LocalStack with the AWS/SQS send rate) and the DLQ.
# The stack stays up afterwards (`npm run stack:down` stops it, DynamoDB Local too).
set -euo pipefail
cd "$(dirname "$0")/.."
# sqs-jobs needs Node >= 22.12: the machine's, or the LTS brought into .node/ (scripts/node.sh).
source scripts/node.sh
use_supported_node
export AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true
bash scripts/ensure-deps.sh
stack="${SQS_JOBS_STACK:-localstack}"
rc=0
SQS_JOBS_STACK="$stack" bash infra/local/stack.sh up || rc=$?
if [[ $stack == localstack && $rc == 3 ]]; then
  echo "[demo] LocalStack cannot run here (see above); running the demo on moto instead" >&2
  stack=moto
  SQS_JOBS_STACK=moto bash infra/local/stack.sh up
elif ((rc != 0)); then
  exit "$rc"
fi
eval "$(bash infra/local/stack.sh env "$stack")"
# The job store (the fan-out's status and counters): DynamoDB Local, left up like the stack.
bash infra/local/dynamodb.sh up
eval "$(bash infra/local/dynamodb.sh env)"
echo "[demo] on $stack at $AWS_ENDPOINT_URL, memcached at $SQS_JOBS_MEMCACHED, job store on $AWS_ENDPOINT_URL_DYNAMODB" >&2
exec node_modules/.bin/tsx scripts/demo.ts "$@"
