#!/usr/bin/env bash
# `npm run package [-- <staging dir> <destination>]`: the package as it is published. The build (from
# tsconfig.build.json), the files package.json names, and a manifest with only what an app's
# install reads: no scripts (an install would be warned of `prepare`, which builds from sources the
# package does not carry) and no devDependencies. Packed in a staging folder (default
# .local/package/), the tarball written to <destination> (default: the repository), its path printed
# last. Publish that tarball (`npm publish <tarball>`), never the repository itself.
set -euo pipefail
cd "$(dirname "$0")/.."
stage="${1:-.local/package}"
dest="${2:-$PWD}"
rm -rf "$stage"
mkdir -p "$stage" "$dest"
npx tsc -p tsconfig.build.json --outDir "$stage/dist" >&2
node -e '
  const fs = require("fs");
  const [from, to] = process.argv.slice(1);
  const pkg = JSON.parse(fs.readFileSync(from, "utf8"));
  delete pkg.scripts;
  delete pkg.devDependencies;
  fs.writeFileSync(to, JSON.stringify(pkg, null, 2) + "\n");
  for (const f of pkg.files) if (!f.startsWith("dist/") && fs.existsSync(f)) fs.cpSync(f, require("path").join(require("path").dirname(to), f), { recursive: true });
' package.json "$stage/package.json"
(cd "$stage" && npm pack --silent --pack-destination "$(cd "$dest" && pwd)") | tail -n 1 | sed "s#^#$(cd "$dest" && pwd)/#"
