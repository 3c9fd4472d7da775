#!/usr/bin/env bash
# The dashboard's browser tests drive Debian's Chromium (package chromium) with playwright-core:
# install it when missing and this user may (root with apt-get); else say how.
# SQS_JOBS_CHROMIUM names another Chromium binary.
set -euo pipefail
bin="${SQS_JOBS_CHROMIUM:-/usr/bin/chromium}"
if [[ -x $bin ]]; then exit 0; fi
if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
  echo "[chromium] installing Debian's chromium for the dashboard's browser tests" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null || {
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  }
  exit 0
fi
echo "[chromium] no Chromium at $bin: install it (sudo apt-get install chromium) or set SQS_JOBS_CHROMIUM" >&2
exit 1
