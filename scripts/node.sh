# Sourced by the scripts behind `npm test`, `npm run demo` and the benchmarks. sqs-jobs needs
# Node >= 22.12 (package.json's engines). Where the shell's Node is older (Debian's 20 on these
# machines) or not the one asked for, a Node.js from the npm registry's node-linux package
# (scripts/ensure-node.sh, into .node/) goes first on PATH, and one line on stderr says so.

# The active LTS: what the full test suite, the demo and the worker image run on.
SQS_JOBS_LTS_NODE="26.12.1"

# This shell's Node as "major minor", or "0 0" when there is none.
_node_version() { node -e 'console.log(process.versions.node.split(".").slice(0, 2).join(" "))' 2>/dev/null || echo "0 0"; }

# Put Node <version> first on PATH, unless the shell's Node has its major version already.
use_node() {
  local want="$1" major minor bin
  read -r major minor <<<"$(_node_version)"
  if [[ $major == "${want%%.*}" ]]; then return 0; fi
  bin=$(bash scripts/ensure-node.sh "$want") || return 1
  echo "[node] using Node $want from .node/ (the npm registry's node-linux package) instead of this machine's $(node --version 2>/dev/null || echo 'none')" >&2
  export PATH="$bin:$PATH"
}

# Keep the shell's Node when sqs-jobs supports it (>= 22.12); otherwise bring in the LTS.
use_supported_node() {
  local major minor
  read -r major minor <<<"$(_node_version)"
  if ((major > 22 || (major == 22 && minor >= 12))); then return 0; fi
  use_node "$SQS_JOBS_LTS_NODE"
}
