# Sourced by the scripts that install from a registry: a connection reset fails a whole install.
# `retry <command...>`: up to three tries, 10 s apart; the last failure's status is returned.
retry() {
  local try
  for try in 1 2 3; do
    "$@" && return 0
    ((try == 3)) && return 1
    echo "[retry] $1 failed (try $try of 3); trying again in 10 s" >&2
    sleep 10
  done
}
