#!/usr/bin/env bash
# The local AWS stack without Docker, on 127.0.0.1 only:
#   localstack  LocalStack 4.14.0 (SQS + CloudWatch + SNS), port $SQS_JOBS_LOCALSTACK_PORT (4566): the default
#   moto        moto server 5.2.3 (SQS + CloudWatch + SNS), port $SQS_JOBS_MOTO_PORT (4567): second opinion, fallback
#   memcached   the system binary, port $SQS_JOBS_MEMCACHED_PORT (11211)
#
#   stack.sh up     [TARGET...]  install what is missing, start what is not running, wait until it answers
#   stack.sh down   [TARGET...]  stop only the processes this script started (by pid); without a
#                                TARGET also DynamoDB Local, if dynamodb.sh started it
#   stack.sh status [TARGET...]  say what answers (and is the right server); exit 0 only when all do
#   stack.sh reset  [TARGET...]  LocalStack: restart it (it has no reset endpoint); moto: /moto-api/reset;
#                                memcached: flush_all
#   stack.sh env    [STACK]      print the variables that point sqs-jobs at localstack or moto
#
# TARGETs: localstack, moto, memcached, all. Without one: $SQS_JOBS_STACK (default localstack) and
# memcached. Pid files, logs and LocalStack's files live in $SQS_JOBS_STATE_DIR (default .local/).
# Exit 3 from `up`: LocalStack cannot be installed here (no Python >= 3.13); use SQS_JOBS_STACK=moto.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE="$ROOT/infra/local"
STATE="${SQS_JOBS_STATE_DIR:-$ROOT/.local}"
HOST="127.0.0.1"
STACK="${SQS_JOBS_STACK:-localstack}"

LOCALSTACK_VERSION="4.14.0"
LOCALSTACK_PORT="${SQS_JOBS_LOCALSTACK_PORT:-4566}"
LOCALSTACK_URL="http://$HOST:$LOCALSTACK_PORT"
LOCALSTACK_VENV="${SQS_JOBS_LOCALSTACK_VENV:-$ROOT/.venv-localstack}"
LOCALSTACK_CONSTRAINTS="$HERE/localstack-constraints.txt"
LOCALSTACK_FS="$STATE/localstack-fs"
LOCALSTACK_SERVER="${SQS_JOBS_LOCALSTACK_SERVER:-hypercorn}"

MOTO_VERSION="5.2.3"
MOTO_PORT="${SQS_JOBS_MOTO_PORT:-4567}"
MOTO_URL="http://$HOST:$MOTO_PORT"
MOTO_VENV="${SQS_JOBS_MOTO_VENV:-$ROOT/.venv}"

MEMCACHED_PORT="${SQS_JOBS_MEMCACHED_PORT:-11211}"

say() { printf '[stack] %s\n' "$*" >&2; }

# ---- is the right server answering? ------------------------------------------------------------

# LocalStack's health document, with SQS loaded or loadable ("available", "running").
localstack_answers() {
  local health
  health=$(curl -fsS --max-time 2 "$LOCALSTACK_URL/_localstack/health" 2>/dev/null) || return 1
  [[ "$health" =~ \"sqs\":\ *\"(available|running)\" ]]
}

# moto's own API, its cheapest call (data.json dumps every resource: megabytes after a test run).
# LocalStack answers it with 501, which -f turns into a failure.
moto_answers() { curl -fs --max-time 2 "$MOTO_URL/moto-api/config" 2>/dev/null | grep -q '"batch"'; }

memcached_answers() {
  local reply
  reply=$( { exec 3<>"/dev/tcp/$HOST/$MEMCACHED_PORT" && printf 'version\r\n' >&3 && timeout 2 head -c 8 <&3; } 2>/dev/null) || return 1
  [[ "$reply" == VERSION* ]]
}

port_taken() { (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null; }

# ---- processes this script started -------------------------------------------------------------

pidfile() { echo "$STATE/$1.pid"; }

# The pid in $1's pid file, when that process is alive and is still what we started (not a reused pid).
our_pid() {
  local file pid
  file=$(pidfile "$1")
  [[ -f "$file" ]] || return 1
  pid=$(cat "$file")
  kill -0 "$pid" 2>/dev/null || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q -- "$2" || return 1
  echo "$pid"
}

pattern_of() {
  case "$1" in
    localstack) echo "localstack.runtime.main" ;;
    moto) echo "moto_server" ;;
    memcached) echo "memcached" ;;
  esac
}

wait_for() { # name check-function seconds pid
  local name=$1 check=$2 deadline=$((SECONDS + $3)) pid=$4
  until "$check"; do
    if ! kill -0 "$pid" 2>/dev/null; then say "$name exited during start-up; see $STATE/$name.log:"; tail -n 20 "$STATE/$name.log" >&2; return 1; fi
    if ((SECONDS >= deadline)); then say "$name did not answer within $3 s; see $STATE/$name.log"; return 1; fi
    sleep 0.2
  done
}

stop() { # name
  local pid
  if pid=$(our_pid "$1" "$(pattern_of "$1")"); then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
    say "$1 stopped (pid $pid)"
  else
    say "$1 was not started by this script (no live pid in $(pidfile "$1")); left alone"
  fi
  rm -f "$(pidfile "$1")"
}

# ---- LocalStack ----------------------------------------------------------------------------------

# LocalStack 4.14.0 needs Python >= 3.13: its SQS provider imports warnings.deprecated (new in 3.13),
# so on 3.12 every SQS call fails with "cannot import name 'deprecated' from 'warnings'", and on 3.11
# with "invalid syntax". It starts and reports healthy on both, so only a real call shows it.
python_fits() { "$1" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 13))' >/dev/null 2>&1; }

# An interpreter for LocalStack's venv: $SQS_JOBS_PYTHON, else 3.13 on PATH or under pyenv, else any
# newer one. pyenv's shims fail for versions that are installed but not selected, hence the direct look.
find_python() {
  local pyenv_root="${PYENV_ROOT:-$HOME/.pyenv}" c
  local candidates=("${SQS_JOBS_PYTHON:-}" python3.13)
  candidates+=($(ls -d "$pyenv_root"/versions/3.13* 2>/dev/null | sort -rV | sed 's|$|/bin/python|'))
  candidates+=(python3 python3.14 $(ls -d "$pyenv_root"/versions/3.1[4-9]* 2>/dev/null | sort -rV | sed 's|$|/bin/python|'))
  for c in "${candidates[@]}"; do
    [[ -n "$c" ]] || continue
    if python_fits "$c"; then "$c" -c 'import sys; print(sys.executable)'; return 0; fi
  done
  return 1
}

no_python() {
  say "LocalStack $LOCALSTACK_VERSION needs Python >= 3.13 for its venv, and none was found"
  say "(looked at \$SQS_JOBS_PYTHON, python3.13, python3, python3.14 on PATH and ${PYENV_ROOT:-$HOME/.pyenv}/versions/3.13+)."
  say "Install one, then run this again:"
  say "  pyenv install 3.13                                 (with pyenv)"
  say "  sudo apt-get install -y python3.13 python3.13-venv (Debian 13, Ubuntu 24.04 and later)"
  say "  brew install python@3.13                           (macOS)"
  say "or name one with SQS_JOBS_PYTHON=/path/to/python3.13, or use moto instead: SQS_JOBS_STACK=moto"
}

install_localstack() {
  local stamp want python
  want="localstack-core[base-runtime]==$LOCALSTACK_VERSION $(sha256sum "$LOCALSTACK_CONSTRAINTS" | cut -c1-16)"
  stamp="$LOCALSTACK_VENV/.sqs-jobs-installed"
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]] && python_fits "$LOCALSTACK_VENV/bin/python"; then return 0; fi
  python=$(find_python) || { no_python; exit 3; }
  say "installing localstack-core $LOCALSTACK_VERSION into $LOCALSTACK_VENV with $python (first run only: about 40 s with a warm pip cache, 90 s or more without)"
  rm -rf "$LOCALSTACK_VENV"
  "$python" -m venv "$LOCALSTACK_VENV"
  "$LOCALSTACK_VENV/bin/pip" install --quiet --disable-pip-version-check \
    -c "$LOCALSTACK_CONSTRAINTS" "localstack-core[base-runtime]==$LOCALSTACK_VERSION"
  echo "$want" >"$stamp"
}

start_localstack() {
  if localstack_answers; then say "LocalStack already answers on $LOCALSTACK_URL"; return 0; fi
  if port_taken "$LOCALSTACK_PORT"; then
    say "port $LOCALSTACK_PORT is taken by something that is not LocalStack: stop it, or pick another port"
    say "with SQS_JOBS_LOCALSTACK_PORT. (moto on $LOCALSTACK_PORT, started by an older stack.sh? moto's port is"
    say "now $MOTO_PORT; \`infra/local/stack.sh down moto\` stops the old one by its pid file.)"
    exit 1
  fi
  install_localstack
  mkdir -p "$LOCALSTACK_FS"
  # Loopback only: LocalStack's default HTTP server (twisted) ignores GATEWAY_LISTEN's host and
  # listens on every interface; hypercorn binds 127.0.0.1 (about half as fast; twisted is one
  # variable away: SQS_JOBS_LOCALSTACK_SERVER=twisted). No DNS server (the machine has /.dockerenv,
  # so LocalStack thinks it is in a container and would serve DNS on 0.0.0.0:53 and may touch
  # /etc/resolv.conf). Every file under $STATE (else /usr/lib, /var/lib, /etc and a /tmp/localstack
  # shared by every instance). No certificate download, no analytics events, no persistence.
  # Queue URLs: http://127.0.0.1:<port>/000000000000/<name>. SQS loads at start, not on first call.
  (
    cd "$STATE"
    exec env GATEWAY_LISTEN="$HOST:$LOCALSTACK_PORT" LOCALSTACK_HOST="$HOST:$LOCALSTACK_PORT" \
      GATEWAY_SERVER="$LOCALSTACK_SERVER" SERVICES=sqs,cloudwatch,sns,s3 EAGER_SERVICE_LOADING=1 SQS_ENDPOINT_STRATEGY=off \
      DNS_ADDRESS=0 OVERRIDE_IN_DOCKER=0 FILESYSTEM_ROOT="$LOCALSTACK_FS" \
      SKIP_SSL_CERT_DOWNLOAD=1 DISABLE_EVENTS=1 PERSISTENCE=0 \
      "$LOCALSTACK_VENV/bin/python" -m localstack.runtime.main
  ) >"$STATE/localstack.log" 2>&1 &
  echo $! >"$(pidfile localstack)"
  wait_for localstack localstack_answers 90 $!
  say "LocalStack $LOCALSTACK_VERSION started on $LOCALSTACK_URL (pid $(cat "$(pidfile localstack)"))"
}

reset_localstack() {
  if our_pid localstack "$(pattern_of localstack)" >/dev/null; then
    stop localstack
    start_localstack
    say "LocalStack restarted: every queue, message and metric is gone"
  elif localstack_answers; then
    say "LocalStack on $LOCALSTACK_URL was not started by this script, and it has no reset endpoint:"
    say "restart it yourself (docker compose restart localstack)"
    exit 1
  else
    say "LocalStack: not running; nothing to reset"
  fi
}

# ---- moto ----------------------------------------------------------------------------------------

install_moto() {
  if [[ -x "$MOTO_VENV/bin/moto_server" ]] && "$MOTO_VENV/bin/python" -c "import moto,sys; sys.exit(moto.__version__ != '$MOTO_VERSION')" 2>/dev/null; then
    return 0
  fi
  say "installing moto[server]==$MOTO_VERSION into $MOTO_VENV (first run only)"
  python3 -m venv "$MOTO_VENV"
  "$MOTO_VENV/bin/pip" install --quiet --disable-pip-version-check "moto[server]==$MOTO_VERSION"
}

start_moto() {
  if moto_answers; then say "moto already answers on $MOTO_URL"; return 0; fi
  if port_taken "$MOTO_PORT"; then say "port $MOTO_PORT is taken by something that is not moto; pick another with SQS_JOBS_MOTO_PORT"; exit 1; fi
  install_moto
  "$MOTO_VENV/bin/moto_server" -H "$HOST" -p "$MOTO_PORT" >"$STATE/moto.log" 2>&1 &
  echo $! >"$(pidfile moto)"
  wait_for moto moto_answers 60 $!
  say "moto $MOTO_VERSION started on $MOTO_URL (pid $(cat "$(pidfile moto)"))"
}

reset_moto() {
  if moto_answers; then
    curl -fs -o /dev/null -X POST "$MOTO_URL/moto-api/reset" && say "moto state wiped"
  else
    say "moto: not answering on $MOTO_URL; nothing to reset"
  fi
}

# ---- memcached -----------------------------------------------------------------------------------

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

start_memcached() {
  if memcached_answers; then say "memcached already answers on $HOST:$MEMCACHED_PORT"; return 0; fi
  install_memcached
  local user=()
  [[ $(id -u) -eq 0 ]] && user=(-u nobody)
  memcached -l "$HOST" -p "$MEMCACHED_PORT" -U 0 -m 64 "${user[@]}" >"$STATE/memcached.log" 2>&1 &
  echo $! >"$(pidfile memcached)"
  wait_for memcached memcached_answers 15 $!
  say "memcached started on $HOST:$MEMCACHED_PORT (pid $(cat "$(pidfile memcached)"))"
}

reset_memcached() {
  { exec 3<>"/dev/tcp/$HOST/$MEMCACHED_PORT" && printf 'flush_all\r\n' >&3 && timeout 2 head -c 2 <&3 >/dev/null; } 2>/dev/null \
    && say "memcached flushed" || say "memcached: not answering on $HOST:$MEMCACHED_PORT; nothing to flush"
}

# ---- commands ------------------------------------------------------------------------------------

status_of() {
  local who=""
  our_pid "$1" "$(pattern_of "$1")" >/dev/null && who=" (pid $(cat "$(pidfile "$1")"), started here)"
  case "$1" in
    localstack) if localstack_answers; then say "localstack: up   $LOCALSTACK_URL (SQS + CloudWatch + SNS)$who"; else say "localstack: down ($LOCALSTACK_URL/_localstack/health does not answer)"; return 1; fi ;;
    moto) if moto_answers; then say "moto:       up   $MOTO_URL (SQS + CloudWatch + SNS)$who"; else say "moto:       down ($MOTO_URL/moto-api/config does not answer)"; return 1; fi ;;
    memcached) if memcached_answers; then say "memcached:  up   $HOST:$MEMCACHED_PORT$who"; else say "memcached:  down ($HOST:$MEMCACHED_PORT)"; return 1; fi ;;
  esac
}

print_env() { # stack
  local url
  case "$1" in
    localstack) url=$LOCALSTACK_URL ;;
    moto) url=$MOTO_URL ;;
    *) say "env: name one stack, localstack or moto (got '$1')"; return 2 ;;
  esac
  cat <<ENV
export SQS_JOBS_STACK=$1
export AWS_ENDPOINT_URL=$url
unset SQS_JOBS_ENDPOINT AWS_ENDPOINT_URL_SQS AWS_ENDPOINT_URL_CLOUDWATCH
export AWS_REGION=\${AWS_REGION:-us-east-1}
export AWS_ACCESS_KEY_ID=\${AWS_ACCESS_KEY_ID:-test}
export AWS_SECRET_ACCESS_KEY=\${AWS_SECRET_ACCESS_KEY:-test}
export SQS_JOBS_MEMCACHED=$HOST:$MEMCACHED_PORT
ENV
}

command=${1:-}
shift || true
named=$#
targets=()
for t in "${@:-$STACK memcached}"; do
  for u in $t; do
    case "$u" in
      all) targets+=(localstack moto memcached) ;;
      localstack | moto | memcached) targets+=("$u") ;;
      *) say "unknown target '$u': localstack, moto, memcached or all"; exit 2 ;;
    esac
  done
done

mkdir -p "$STATE"
case "$command" in
  up)
    for t in "${targets[@]}"; do "start_$t"; done
    for t in "${targets[@]}"; do
      if [[ $t != memcached ]]; then say "point sqs-jobs at $t with: eval \"\$(${SQS_JOBS_ENV_COMMAND:-infra/local/stack.sh env} $t)\""; fi
    done
    ;;
  down)
    for t in "${targets[@]}"; do stop "$t"; done
    # Without a target, also the job store's DynamoDB Local (npm test and npm run demo start it).
    if ((named == 0)); then bash "$HERE/dynamodb.sh" down; fi
    ;;
  status)
    ok=0
    for t in "${targets[@]}"; do status_of "$t" || ok=1; done
    exit $ok
    ;;
  reset) for t in "${targets[@]}"; do "reset_$t"; done ;;
  env) print_env "${1:-$STACK}" ;;
  *) echo "usage: $0 up|down|status|reset [localstack|moto|memcached|all ...]  |  $0 env [localstack|moto]" >&2; exit 2 ;;
esac
