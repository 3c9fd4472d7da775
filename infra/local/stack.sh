#!/usr/bin/env bash
# The local AWS stack without Docker: moto server (SQS + CloudWatch) and memcached, on 127.0.0.1.
#   stack.sh up       install what is missing, start what is not running, wait until both answer
#   stack.sh down     stop only the processes this script started (by pid)
#   stack.sh status   say what answers; exit 0 only when both do
#   stack.sh reset    wipe moto's state and flush memcached
#   stack.sh env      print the environment variables that point sqs-jobs at this stack
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
STATE="$ROOT/.local"
VENV="$ROOT/.venv"
MOTO_VERSION="5.2.3"
HOST="127.0.0.1"
MOTO_PORT="${SQS_JOBS_MOTO_PORT:-4566}"
MEMCACHED_PORT="${SQS_JOBS_MEMCACHED_PORT:-11211}"
MOTO_URL="http://$HOST:$MOTO_PORT"

say() { printf '[stack] %s\n' "$*" >&2; }

moto_answers() { curl -s -o /dev/null --max-time 2 "$MOTO_URL/moto-api/data.json"; }

memcached_answers() {
  local reply
  reply=$( { exec 3<>"/dev/tcp/$HOST/$MEMCACHED_PORT" && printf 'version\r\n' >&3 && timeout 2 head -c 8 <&3; } 2>/dev/null) || return 1
  [[ "$reply" == VERSION* ]]
}

wait_for() { # name check-function seconds
  local name=$1 check=$2 deadline=$((SECONDS + $3))
  until "$check"; do
    if ((SECONDS >= deadline)); then say "$name did not answer within $3 s; see $STATE/$name.log"; return 1; fi
    sleep 0.2
  done
}

pid_alive() { [[ -f "$STATE/$1.pid" ]] && kill -0 "$(cat "$STATE/$1.pid")" 2>/dev/null; }

install_moto() {
  if [[ -x "$VENV/bin/moto_server" ]] && "$VENV/bin/python" -c "import moto,sys; sys.exit(moto.__version__ != '$MOTO_VERSION')" 2>/dev/null; then
    return 0
  fi
  say "installing moto[server]==$MOTO_VERSION into $VENV (first run only)"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "moto[server]==$MOTO_VERSION"
}

install_memcached() {
  command -v memcached >/dev/null && return 0
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    say "installing memcached from the distribution's packages"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq memcached >/dev/null
  else
    say "memcached is not installed. Install it, then run this again:"
    say "  sudo apt-get install -y memcached     (Debian/Ubuntu)"
    say "  brew install memcached                (macOS)"
    exit 1
  fi
}

start_moto() {
  if moto_answers; then say "moto already answers on $MOTO_URL"; return 0; fi
  install_moto
  "$VENV/bin/moto_server" -H "$HOST" -p "$MOTO_PORT" >"$STATE/moto.log" 2>&1 &
  echo $! >"$STATE/moto.pid"
  wait_for moto moto_answers 60
  say "moto $MOTO_VERSION started (pid $(cat "$STATE/moto.pid"))"
}

start_memcached() {
  if memcached_answers; then say "memcached already answers on $HOST:$MEMCACHED_PORT"; return 0; fi
  install_memcached
  local user=()
  [[ $(id -u) -eq 0 ]] && user=(-u nobody)
  memcached -l "$HOST" -p "$MEMCACHED_PORT" -U 0 -m 64 "${user[@]}" >"$STATE/memcached.log" 2>&1 &
  echo $! >"$STATE/memcached.pid"
  wait_for memcached memcached_answers 15
  say "memcached started (pid $(cat "$STATE/memcached.pid"))"
}

stop() { # name
  if pid_alive "$1"; then
    local pid; pid=$(cat "$STATE/$1.pid")
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    say "$1 stopped (pid $pid)"
  else
    say "$1 was not started by this script; left alone"
  fi
  rm -f "$STATE/$1.pid"
}

print_env() {
  cat <<ENV
export AWS_ENDPOINT_URL=$MOTO_URL
export AWS_REGION=\${AWS_REGION:-us-east-1}
export AWS_ACCESS_KEY_ID=\${AWS_ACCESS_KEY_ID:-test}
export AWS_SECRET_ACCESS_KEY=\${AWS_SECRET_ACCESS_KEY:-test}
export SQS_JOBS_MEMCACHED=$HOST:$MEMCACHED_PORT
ENV
}

status() {
  local ok=0
  if moto_answers; then say "moto:      up   $MOTO_URL (SQS + CloudWatch)"; else say "moto:      down"; ok=1; fi
  if memcached_answers; then say "memcached: up   $HOST:$MEMCACHED_PORT"; else say "memcached: down"; ok=1; fi
  return $ok
}

mkdir -p "$STATE"
case "${1:-}" in
  up)
    start_moto
    start_memcached
    status
    say "point sqs-jobs at it with:"
    print_env >&2
    ;;
  down) stop moto; stop memcached ;;
  status) status ;;
  reset)
    curl -s -o /dev/null -X POST "$MOTO_URL/moto-api/reset" && say "moto state wiped"
    { exec 3<>"/dev/tcp/$HOST/$MEMCACHED_PORT" && printf 'flush_all\r\n' >&3 && timeout 2 head -c 2 <&3 >/dev/null; } 2>/dev/null && say "memcached flushed"
    ;;
  env) print_env ;;
  *) echo "usage: $0 up|down|status|reset|env" >&2; exit 2 ;;
esac
