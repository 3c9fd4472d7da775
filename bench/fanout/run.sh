#!/usr/bin/env bash
# `npm run bench:fanout [-- --quick]`: its own ElasticMQ, memcached and DynamoDB Local on loopback,
# then main.ts.
#   FANOUT_ELASTICMQ_PORT (default 9524), FANOUT_MEMCACHED_PORT (11511), FANOUT_DYNAMODB_PORT (4669):
#   reused when they already answer, else started here (state in .local/bench-fanout/; DynamoDB
#   Local through infra/local/dynamodb.sh on that port) and stopped at the end.
# Needs node_modules (npm ci), Java (+ javac and Maven for DynamoDB Local's first run), memcached.
set -euo pipefail
cd "$(dirname "$0")/../.."
export AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true
EMQ_PORT="${FANOUT_ELASTICMQ_PORT:-9524}"
MC_PORT="${FANOUT_MEMCACHED_PORT:-11511}"
DDB_PORT="${FANOUT_DYNAMODB_PORT:-4669}"
STATE=.local/bench-fanout
mkdir -p "$STATE"
say() { printf '[bench:fanout] %s\n' "$*" >&2; }
[[ -x node_modules/.bin/tsx ]] || { say "node_modules is missing: run npm ci first"; exit 1; }

started=()
stop_dynamodb=0
cleanup() {
  for pid in "${started[@]}"; do kill "$pid" 2>/dev/null || true; done
  if ((stop_dynamodb)); then SQS_JOBS_DYNAMODB_PORT="$DDB_PORT" bash infra/local/dynamodb.sh down || true; fi
  wait 2>/dev/null || true # return only once they are gone (ports free)
}
trap cleanup EXIT

emq_answers() { curl -s -o /dev/null --max-time 2 "http://127.0.0.1:$EMQ_PORT/?Action=ListQueues"; }
mc_answers() { (exec 3<>"/dev/tcp/127.0.0.1/$MC_PORT") 2>/dev/null; }

# ElasticMQ's classpath: the one infra/local/elasticmq.sh resolved (read, never written), else our own.
classpath() {
  local shared=.local/elasticmq.classpath pom=infra/local/elasticmq/pom.xml
  if [[ -s $shared && $shared -nt $pom ]]; then cat "$shared"; return; fi
  if [[ ! -s $STATE/elasticmq.classpath || $pom -nt $STATE/elasticmq.classpath ]]; then
    say "resolving ElasticMQ from Maven Central (first run only)"
    mvn -q -B -f "$pom" dependency:build-classpath -Dmdep.outputFile="$PWD/$STATE/elasticmq.classpath" >"$STATE/mvn.log" 2>&1 \
      || { say "maven failed; see $STATE/mvn.log"; exit 1; }
  fi
  cat "$STATE/elasticmq.classpath"
}

if emq_answers; then
  say "reusing the ElasticMQ that answers on 127.0.0.1:$EMQ_PORT"
else
  command -v java >/dev/null || { say "ElasticMQ needs Java: sudo apt-get install -y default-jre-headless maven"; exit 1; }
  sed "s/9324/$EMQ_PORT/g" infra/local/elasticmq/elasticmq.conf >"$STATE/elasticmq.conf"
  java -Xmx1g -Dconfig.file="$STATE/elasticmq.conf" -cp "$(classpath)" org.elasticmq.server.Main >"$STATE/elasticmq.log" 2>&1 &
  started+=("$!")
  for _ in $(seq 150); do emq_answers && break; sleep 0.2; done
  emq_answers || { say "ElasticMQ did not answer within 30 s; see $STATE/elasticmq.log"; exit 1; }
fi
if mc_answers; then
  say "reusing the memcached that answers on 127.0.0.1:$MC_PORT"
else
  command -v memcached >/dev/null || { say "memcached is missing: sudo apt-get install -y memcached"; exit 1; }
  memcached -l 127.0.0.1 -p "$MC_PORT" -U 0 -m 64 $([[ $(id -u) -eq 0 ]] && echo "-u nobody") >"$STATE/memcached.log" 2>&1 &
  started+=("$!")
  for _ in $(seq 50); do mc_answers && break; sleep 0.1; done
  mc_answers || { say "memcached did not answer on 127.0.0.1:$MC_PORT"; exit 1; }
fi
if SQS_JOBS_DYNAMODB_PORT="$DDB_PORT" bash infra/local/dynamodb.sh status >/dev/null 2>&1; then
  say "reusing the DynamoDB Local that answers on 127.0.0.1:$DDB_PORT"
else
  stop_dynamodb=1
  SQS_JOBS_DYNAMODB_PORT="$DDB_PORT" bash infra/local/dynamodb.sh up
fi

SQS_JOBS_ELASTICMQ_URL="http://127.0.0.1:$EMQ_PORT" SQS_JOBS_MEMCACHED="127.0.0.1:$MC_PORT" \
  AWS_ENDPOINT_URL_DYNAMODB="http://127.0.0.1:$DDB_PORT" \
  timeout 1800 node_modules/.bin/tsx bench/fanout/main.ts "$@"
