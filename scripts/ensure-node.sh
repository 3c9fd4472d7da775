#!/usr/bin/env bash
# Prints the bin folder of Node.js <version> (e.g. 22.23.3), installing it first when missing: from
# the npm registry's node-linux-<arch> package into .node/<version>/ (no other download).
# Used by scripts/test.sh to run the unit suite and one integration stack on the Node versions
# people run beside the machine's own.
set -euo pipefail
cd "$(dirname "$0")/.."
version="${1:?usage: ensure-node.sh <version>}"
case "$(uname -m)" in
  x86_64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) echo "[node] no node-linux package for $(uname -m)" >&2; exit 1 ;;
esac
dir=".node/$version"
bin="$PWD/$dir/node_modules/node-linux-$arch/bin"
if [[ ! -x $bin/node ]] || [[ $("$bin/node" --version) != "v$version" ]]; then
  echo "[node] installing Node.js $version (npm package node-linux-$arch@$version) into $dir" >&2
  rm -rf "$dir"
  mkdir -p "$dir"
  source scripts/retry.sh
  retry npm install --prefix "$dir" --no-save --no-audit --no-fund --no-package-lock "node-linux-$arch@$version" >&2
fi
"$bin/node" --version >/dev/null
echo "$bin"
