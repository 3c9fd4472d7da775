#!/usr/bin/env bash
# `npm run bench:pause [-- --quick]`: what pausing costs a worker while nothing is paused, and how
# fast a pause and a resume reach 4 workers (main.ts), on servers of its own on loopback:
#   PAUSE_ELASTICMQ_PORT (default 9734), PAUSE_DYNAMODB_PORT (4779), PAUSE_MEMCACHED_PORT (11734):
#   reused when they already answer, else started here (state in .local/bench-pause/) and stopped
#   at the end. The workers run the package built from this tree into .local/bench-pause/dist
#   (dist/ is left alone; rebuilt only when src/ changed). ~5 min (--quick: about 1).
set -euo pipefail
cd "$(dirname "$0")/../.."
# sqs-jobs needs Node >= 22.12: the machine's, or the LTS brought into .node/ (scripts/node.sh).
source scripts/node.sh
use_supported_node
export AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true
EMQ_PORT="${PAUSE_ELASTICMQ_PORT:-9734}"
DDB_PORT="${PAUSE_DYNAMODB_PORT:-4779}"
MC_PORT="${PAUSE_MEMCACHED_PORT:-11734}"
STATE=.local/bench-pause
mkdir -p "$STATE"
say() { printf '[bench:pause] %s\n' "$*" >&2; }
[[ -x node_modules/.bin/tsx ]] || { say "node_modules is missing: run npm ci first"; exit 1; }
for port in "$DDB_PORT" "$MC_PORT"; do
  case "$port" in 4566 | 4567 | 4569 | 11211) say "port $port belongs to the test stack: set PAUSE_*_PORT"; exit 1 ;; esac
done
source bench/lib/servers.sh
trap cleanup EXIT
# The build runs while the servers start; skipped when nothing it compiles changed since the last.
build=""
if [[ ! -f $STATE/build.stamp || -n $(find src handlers tsconfig.json tsconfig.build.json -newer "$STATE/build.stamp" -print -quit) ]]; then
  touch "$STATE/build.stamp.next"
  node_modules/.bin/tsc -p tsconfig.build.json --outDir "$STATE/dist" >"$STATE/build.log" 2>&1 &
  build=$!
  started+=("$build")
fi
ensure_elasticmq "$EMQ_PORT"
ensure_dynamodb "$DDB_PORT"
ensure_memcached "$MC_PORT"
if [[ -n $build ]]; then
  if ! wait "$build"; then
    # tsc writes its output despite type errors (another change under way in src/): run it, and say so.
    [[ -f $STATE/dist/src/index.js && $STATE/dist/src/index.js -nt $STATE/build.stamp.next ]] || { say "the build failed; see $STATE/build.log"; exit 1; }
    say "the build reported type errors (see $STATE/build.log); running what it wrote"
  fi
  mv "$STATE/build.stamp.next" "$STATE/build.stamp"
fi
PAUSE_SQS="http://127.0.0.1:$EMQ_PORT" PAUSE_DYNAMODB="http://127.0.0.1:$DDB_PORT" PAUSE_MEMCACHED="127.0.0.1:$MC_PORT" \
  BENCH_DIST="$PWD/$STATE/dist" timeout --foreground --kill-after=10 600 node_modules/.bin/tsx bench/pause/main.ts "$@"
