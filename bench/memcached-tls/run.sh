#!/usr/bin/env bash
# `npm run bench:memcached-tls [-- --claims N --rounds R]`: the CPU of a claim + release with TLS
# beside without, against two memcacheds main.ts starts on free loopback ports (one with -Z, on
# certificates made with openssl for the run) and stops at the end. Needs node_modules (npm ci),
# memcached with TLS (Debian's 1.6.18 has it) and openssl.
set -euo pipefail
cd "$(dirname "$0")/../.."
# sqs-jobs needs Node >= 22.12: the machine's, or the LTS brought into .node/ (scripts/node.sh).
source scripts/node.sh
use_supported_node
say() { printf '[bench:memcached-tls] %s\n' "$*" >&2; }
[[ -x node_modules/.bin/tsx ]] || { say "node_modules is missing: run npm ci first"; exit 1; }
command -v memcached >/dev/null || { say "memcached is missing: sudo apt-get install -y memcached"; exit 1; }
command -v openssl >/dev/null || { say "openssl is missing: sudo apt-get install -y openssl"; exit 1; }
# MemcachedLock from the built package, as users run it.
npm run --silent build
timeout 900 node --import tsx bench/memcached-tls/main.ts "$@"
