#!/usr/bin/env bash
# Amazon DynamoDB Local on 127.0.0.1 only, for the job store's tests and the demo.
#   dynamodb.sh up | down | status | env
# Port from SQS_JOBS_DYNAMODB_PORT (default 4569); pid and log files carry the port, so two ports
# can run side by side. `env` prints the endpoint for the AWS SDKs and CLI.
#
# Why DynamoDB Local and not the other local AWS servers:
#  - moto's DynamoDB does not apply a condition and its write atomically under concurrent requests:
#    two conditional UpdateItems (or two transactions) racing on one item lose updates (measured),
#    and the job store's counters and claims rely on exactly that atomicity.
#  - LocalStack's DynamoDB downloads Java 21 and DynamoDB Local at run time, which fails offline.
# DynamoDB Local is AWS's own emulator (SQLite underneath), from Maven Central.
#
# Java (with javac) and Maven come from the machine (installed from the distribution when missing
# and root); DynamoDB Local and its dependencies from Maven Central, resolved once into ~/.m2 and
# copied, with sqlite4java's native libraries, into .local/dynamodb-lib (again only when the pom
# changes). The stock server listens on every interface and has no host option, so it is started
# through a small wrapper (dynamodb/LoopbackDynamoDBLocal.java) that binds it to 127.0.0.1.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE="$ROOT/infra/local/dynamodb"
STATE="${SQS_JOBS_STATE_DIR:-$ROOT/.local}"
LIB="$STATE/dynamodb-lib"
WRAPPER="$STATE/dynamodb-wrapper"
PORT="${SQS_JOBS_DYNAMODB_PORT:-4569}"
URL="http://127.0.0.1:$PORT"
PIDFILE="$STATE/dynamodb-$PORT.pid"
LOG="$STATE/dynamodb-$PORT.log"
MAIN=LoopbackDynamoDBLocal

say() { printf '[dynamodb] %s\n' "$*" >&2; }

# DynamoDB Local answers ListTables only to a request that looks signed: it reads the access key
# and region from the Authorization header (it does not check the signature).
answers() {
  curl -s --max-time 2 -X POST "$URL/" \
    -H 'X-Amz-Target: DynamoDB_20120810.ListTables' \
    -H 'Content-Type: application/x-amz-json-1.0' \
    -H 'Authorization: AWS4-HMAC-SHA256 Credential=x/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=x' \
    -d '{}' 2>/dev/null | grep -q '"TableNames"'
}

# The pid in our pid file, if that process is still our server (pids get reused).
our_pid() {
  local pid
  [[ -f "$PIDFILE" ]] || return 1
  pid=$(cat "$PIDFILE")
  [[ "$pid" =~ ^[0-9]+$ ]] && [[ -r "/proc/$pid/cmdline" ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q "$MAIN" || return 1
  echo "$pid"
}

install_tools() {
  command -v java >/dev/null && command -v javac >/dev/null && command -v mvn >/dev/null && return 0
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    say "installing Java (JDK, for the small wrapper) and Maven from the distribution's packages"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq default-jdk-headless maven >/dev/null
  else
    say "DynamoDB Local needs Java and Maven: sudo apt-get install -y default-jdk-headless maven"; exit 1
  fi
}

# Jars and sqlite4java's .so files in one folder; sqlite4java finds its native library next to its jar.
libs() {
  local stamp="$LIB/.resolved" tmp
  [[ -f "$stamp" && ! "$HERE/pom.xml" -nt "$stamp" ]] && return 0
  say "resolving DynamoDB Local from Maven Central (first run, or after the pom changed)"
  tmp="$LIB.tmp.$$"
  rm -rf "$tmp"
  mvn -q -B -f "$HERE/pom.xml" dependency:copy-dependencies -DoutputDirectory="$tmp" -DincludeScope=runtime \
    >"$STATE/dynamodb-mvn.log" 2>&1 || { rm -rf "$tmp"; say "maven failed; see $STATE/dynamodb-mvn.log"; exit 1; }
  ls "$tmp"/libsqlite4java-linux-*.so >/dev/null 2>&1 \
    || { rm -rf "$tmp"; say "no sqlite4java native library among the dependencies; see $STATE/dynamodb-mvn.log"; exit 1; }
  touch "$tmp/.resolved"
  rm -rf "$LIB"
  mv "$tmp" "$LIB"
}

wrapper() {
  [[ -f "$WRAPPER/$MAIN.class" && ! "$HERE/$MAIN.java" -nt "$WRAPPER/$MAIN.class" ]] && return 0
  mkdir -p "$WRAPPER"
  javac -nowarn -cp "$LIB/*" -d "$WRAPPER" "$HERE/$MAIN.java" || { say "javac failed on $HERE/$MAIN.java"; exit 1; }
}

mkdir -p "$STATE"
case "${1:-}" in
  up)
    if answers; then say "already answers on $URL"; exit 0; fi
    if pid=$(our_pid); then say "pid $pid is starting but does not answer yet; see $LOG"; exit 1; fi
    install_tools
    libs
    wrapper
    java -Xmx256m -Djava.library.path="$LIB" -cp "$WRAPPER:$LIB/*" "$MAIN" \
      -inMemory -disableTelemetry -port "$PORT" >"$LOG" 2>&1 &
    pid=$!
    echo "$pid" >"$PIDFILE"
    for _ in $(seq 300); do
      answers && break
      kill -0 "$pid" 2>/dev/null || { rm -f "$PIDFILE"; say "exited before answering (port $PORT taken?); see $LOG"; exit 1; }
      sleep 0.2
    done
    answers || { say "did not answer within 60 s; see $LOG"; exit 1; }
    say "started on $URL (pid $pid)"
    ;;
  down)
    if pid=$(our_pid); then
      kill "$pid"
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      say "stopped (pid $pid)"
    else
      say "not started by this script; left alone"
    fi
    rm -f "$PIDFILE"
    ;;
  status) if answers; then say "up $URL"; else say "down"; exit 1; fi ;;
  env) echo "export AWS_ENDPOINT_URL_DYNAMODB=$URL" ;;
  *) echo "usage: $0 up|down|status|env" >&2; exit 2 ;;
esac
