#!/usr/bin/env bash
# ElasticMQ (a fast SQS server, no CloudWatch) on 127.0.0.1, for load, fault and benchmark runs.
#   elasticmq.sh up | down | status
# Java and Maven come from the machine (installed from the distribution when missing and root);
# the server and its dependencies from Maven Central, resolved once into ~/.m2.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE="$ROOT/infra/local/elasticmq"
STATE="$ROOT/.local"
PORT="${SQS_JOBS_ELASTICMQ_PORT:-9324}"
URL="http://127.0.0.1:$PORT"

say() { printf '[elasticmq] %s\n' "$*" >&2; }
answers() { curl -s -o /dev/null --max-time 2 "$URL/?Action=ListQueues"; }

install_tools() {
  command -v java >/dev/null && command -v mvn >/dev/null && return 0
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    say "installing Java and Maven from the distribution's packages"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq default-jre-headless maven >/dev/null
  else
    say "ElasticMQ needs Java and Maven: sudo apt-get install -y default-jre-headless maven"; exit 1
  fi
}

classpath() {
  local cp="$STATE/elasticmq.classpath"
  if [[ ! -s "$cp" || "$HERE/pom.xml" -nt "$cp" ]]; then
    say "resolving ElasticMQ from Maven Central (first run only)"
    mvn -q -B -f "$HERE/pom.xml" dependency:build-classpath -Dmdep.outputFile="$cp" >"$STATE/elasticmq-mvn.log" 2>&1 \
      || { say "maven failed; see $STATE/elasticmq-mvn.log"; exit 1; }
  fi
  cat "$cp"
}

mkdir -p "$STATE"
case "${1:-}" in
  up)
    if answers; then say "already answers on $URL"; exit 0; fi
    install_tools
    sed "s/9324/$PORT/g" "$HERE/elasticmq.conf" >"$STATE/elasticmq.conf"
    java -Xmx2g -Dconfig.file="$STATE/elasticmq.conf" -cp "$(classpath)" org.elasticmq.server.Main >"$STATE/elasticmq.log" 2>&1 &
    echo $! >"$STATE/elasticmq.pid"
    for _ in $(seq 150); do answers && break; sleep 0.2; done
    answers || { say "did not answer within 30 s; see $STATE/elasticmq.log"; exit 1; }
    say "started on $URL (pid $(cat "$STATE/elasticmq.pid"))"
    ;;
  down)
    if [[ -f "$STATE/elasticmq.pid" ]] && kill -0 "$(cat "$STATE/elasticmq.pid")" 2>/dev/null; then
      kill "$(cat "$STATE/elasticmq.pid")"; say "stopped"
    else
      say "not started by this script; left alone"
    fi
    rm -f "$STATE/elasticmq.pid"
    ;;
  status) if answers; then say "up $URL"; else say "down"; exit 1; fi ;;
  *) echo "usage: $0 up|down|status" >&2; exit 2 ;;
esac
