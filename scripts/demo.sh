#!/usr/bin/env bash
# `npm run demo`: installs what is missing, brings up the local stack, and runs the demo:
# queues, two workers, a burst of jobs, live progress, a summary. The stack stays up afterwards
# (stop it with `npm run stack:down`).
set -euo pipefail
cd "$(dirname "$0")/.."
export AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true
bash scripts/ensure-deps.sh
bash infra/local/stack.sh up
eval "$(bash infra/local/stack.sh env)"
exec node_modules/.bin/tsx scripts/demo.ts "$@"
