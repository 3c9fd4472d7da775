#!/usr/bin/env bash
# The schedules benchmark runs BullMQ, its peer, on Debian's Redis (package redis-server): install it
# when missing and this user may (root with apt-get); else say how. The benchmark starts a
# redis-server of its own on a free loopback port; the package's system service is left alone.
# SQS_JOBS_REDIS_SERVER names another redis-server binary.
set -euo pipefail
bin="${SQS_JOBS_REDIS_SERVER:-$(command -v redis-server || echo /usr/bin/redis-server)}"
if [[ -x $bin ]]; then exit 0; fi
if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
  echo "[redis] installing Debian's redis-server for the schedules benchmark's BullMQ peer" >&2
  # policy-rc.d 101: the package's service is not started (no daemon on 6379 behind our back).
  policy=/usr/sbin/policy-rc.d
  [[ -e $policy ]] || { printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && trap 'rm -f "$policy"' EXIT; }
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server >/dev/null || {
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server >/dev/null
  }
  exit 0
fi
echo "[redis] no redis-server at $bin: install it (sudo apt-get install redis-server) or set SQS_JOBS_REDIS_SERVER" >&2
exit 1
