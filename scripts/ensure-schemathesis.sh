#!/usr/bin/env bash
# schemathesis (PyPI), pinned, in .venv-schemathesis: the HTTP API's fuzzer
# (test/integration/http-fuzz.test.ts). Installed on first use with any Python >= 3.10 (python3,
# else pyenv's); a second run does nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=4.32.5
VENV=.venv-schemathesis
if [[ -x $VENV/bin/st ]] && "$VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('schemathesis') != '$VERSION')" 2>/dev/null; then
  exit 0
fi
fits() { "$1" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 10))' >/dev/null 2>&1; }
python=""
for c in python3 $(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.1[0-9]* 2>/dev/null | sort -rV | sed 's|$|/bin/python|'); do
  if fits "$c"; then python=$c; break; fi
done
if [[ -z $python ]]; then
  echo "[schemathesis] no Python >= 3.10 with venv and ensurepip (Debian: apt-get install python3-venv)" >&2
  exit 3
fi
echo "[schemathesis] installing schemathesis $VERSION into $VENV with $python (first run only)" >&2
rm -rf "$VENV"
"$python" -m venv "$VENV"
"$VENV/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$VERSION"
