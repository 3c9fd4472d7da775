#!/usr/bin/env bash
# `npm run docs`: the docs site. TypeDoc writes the API reference (docs/api/) from the doc comments
# of every name the package exports, and fails when one has none; VitePress then builds ../docs
# into site/dist/ and fails on a link to a page that does not exist. site/ is its own package
# (TypeDoc needs the TypeScript 5/6 compiler API, which TypeScript 7 does not ship), installed here
# on first use. `npm run docs -- dev` serves the site with live reload instead of building it.
set -euo pipefail
cd "$(dirname "$0")/../site"
if [[ ! -d node_modules || package-lock.json -nt node_modules/.package-lock.json ]]; then
  echo "[deps] npm ci (site)" >&2
  source ../scripts/retry.sh
  retry npm ci --no-audit --no-fund
fi
rm -rf ../docs/api
# Vite's root is the pages' folder (../docs): what they compile to imports Vue, found through this link.
ln -sfn ../site/node_modules ../docs/node_modules
npx typedoc
if [[ ${1:-build} == dev ]]; then exec npx vitepress dev; fi
npx vitepress build
echo "[docs] site built: site/dist/ (npm run docs -- dev to browse it)" >&2
