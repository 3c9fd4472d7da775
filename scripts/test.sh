#!/usr/bin/env bash
# `npm test`: installs what is missing, starts the local servers that are not running (and stops
# them again afterwards), then runs the unit tests, the integration suite once against LocalStack
# and once against moto (vitest projects `integration:localstack` and `integration:moto`), the CDK
# construct's offline synth tests and the fault/load suite at CI scale; before them, lint, the
# architecture rules and the docs site build (scripts/docs-site.sh). Extra arguments go to one vitest
# run over every project (e.g. `npm test -- --project integration:moto test/integration/ops.test.ts`)
# and skip the last two.
#
# The job store's tests run against DynamoDB Local (infra/local/dynamodb.sh, port SQS_JOBS_DYNAMODB_PORT).
# Everything runs on Node 26, the active LTS (brought from the npm registry into .node/ where the
# machine's Node is another: scripts/node.sh). Then the unit suite on Node 22 and on 24, and the first
# stack's integration suite, examples aside, shared out between them (--shard: each file runs on one
# of the two; OTHER_NODES below; SQS_JOBS_TEST_NODES="" skips them).
# SQS_JOBS_TEST_STACKS="localstack moto" (default) chooses the servers. Where LocalStack cannot be
# installed (no Python >= 3.13) the run goes on with moto alone and says so loudly, unless
# SQS_JOBS_REQUIRE_LOCALSTACK=1. Ports: SQS_JOBS_LOCALSTACK_PORT, SQS_JOBS_MOTO_PORT, SQS_JOBS_MEMCACHED_PORT.
set -euo pipefail
cd "$(dirname "$0")/.."
export AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED=true
STACK=infra/local/stack.sh
# The full suite on the active LTS (26, the worker image's); the maintenance LTSs 22 and 24 each run the
# unit suite, and between them the first stack's integration suite but the examples (CONTRIBUTING says why).
# SQS_JOBS_TEST_NODES overrides the other Nodes ("" for none).
source scripts/node.sh
use_node "$SQS_JOBS_LTS_NODE"
OTHER_NODES="22.23.5 24.22.3"
echo "[test] Node $(node --version), the full suite; then ${SQS_JOBS_TEST_NODES-$OTHER_NODES} with the chosen set" >&2

bash scripts/ensure-deps.sh
# The HTTP API's fuzzer (PyPI), for test/integration/http-fuzz.test.ts.
bash scripts/ensure-schemathesis.sh
# Chromium (Debian's), for the dashboard's browser tests (test/integration/dashboard.test.ts).
bash scripts/ensure-chromium.sh

# Lint and format first: cheap, and a failure here is reported with the rest, not instead of it.
lint_status=0
npx biome check . || lint_status=$?
if ((lint_status != 0)); then echo "[test] lint/format check failed (npm run format fixes formatting)" >&2; fi
# The architecture rules (.dependency-cruiser.cjs): import cycles, where the SDKs may be used, ports.
if ! npm run --silent lint:deps; then
  lint_status=1
  echo "[test] architecture rules broken (npm run lint:deps; see .dependency-cruiser.cjs)" >&2
fi

# The docs site: every exported name has a doc comment (TypeDoc), and no page links to one that does not exist.
if ! bash scripts/docs-site.sh; then
  lint_status=1
  echo "[test] docs site failed: an exported name without a doc comment, or a dead link (npm run docs)" >&2
fi

read -r -a stacks <<<"${SQS_JOBS_TEST_STACKS:-localstack moto}"
started=()
cleanup() { if ((${#started[@]})); then bash "$STACK" down "${started[@]}"; fi; }
trap cleanup EXIT
warning=""
for target in memcached "${stacks[@]}"; do
  if bash "$STACK" status "$target" >/dev/null 2>&1; then continue; fi
  rc=0
  bash "$STACK" up "$target" || rc=$?
  if ((rc == 0)); then
    started+=("$target")
  elif [[ $target == localstack && $rc == 3 && ${SQS_JOBS_REQUIRE_LOCALSTACK:-0} != 1 ]]; then
    warning="LocalStack could not be installed (no Python >= 3.13, see above): the integration suite ran on moto ONLY"
    printf '\n[test] WARNING: %s\n\n' "$warning" >&2
    stacks=("${stacks[@]/localstack/}")
  else
    exit "$rc"
  fi
done
read -r -a stacks <<<"${stacks[*]}"
if ((${#stacks[@]} == 0)); then echo "[test] no SQS server to test against" >&2; exit 1; fi
# The job store's DynamoDB for both projects: DynamoDB Local from Maven Central (infra/local/dynamodb.sh).
DYNAMODB=infra/local/dynamodb.sh
if ! bash "$DYNAMODB" status >/dev/null 2>&1; then
  bash "$DYNAMODB" up
  trap 'cleanup; bash "$DYNAMODB" down' EXIT
fi
eval "$(bash "$DYNAMODB" env)"
export SQS_JOBS_TEST_STACKS="${stacks[*]}"
# Credentials, memcached and (for the fault suite and anything else outside vitest's projects) the first stack.
eval "$(bash "$STACK" env "${stacks[0]}")"

mkdir -p .local
reports=()
rm -f .local/vitest-*report.json
status=$lint_status
if [[ $# -gt 0 ]]; then
  npx vitest run --reporter=default --reporter=json --outputFile.json=.local/vitest-report.json "$@" || status=$?
  reports+=(.local/vitest-report.json)
else
  # One vitest run per project, so each stack gets its own counts and time in the summary below.
  for project in unit "${stacks[@]/#/integration:}"; do
    echo "[test] ---- $project ----" >&2
    report=".local/vitest-${project/:/-}-report.json"
    npx vitest run --project "$project" --reporter=default --reporter=json --outputFile.json="$report" || status=$?
    reports+=("$report")
  done
  # The other Nodes people run: the unit suite on each, and the first stack's integration suite but
  # the examples (which install their own packages) in shards, one per Node, so that each file runs
  # on one maintenance LTS as well as on 26 (Node from the npm registry's node-linux package, into .node/). The legs run side by side, each its output in .local/leg-<version>.log,
  # shown when both are done: the integration suite waits on its servers half the time (the CPU
  # was about half busy through one leg), so two share the machine in not much more than one's time.
  legs=()
  read -r -a versions <<<"${SQS_JOBS_TEST_NODES-$OTHER_NODES}"
  shard=0
  for version in "${versions[@]}"; do
    shard=$((shard + 1))
    if ! bin=$(bash scripts/ensure-node.sh "$version"); then
      echo "[test] Node $version could not be installed: its runs are skipped, and the run fails" >&2
      status=1
      continue
    fi
    (
      leg_status=0
      for project in unit "integration:${stacks[0]}"; do
        # The unit suite whole on each; the integration files shared out between the legs.
        part=()
        if [[ $project == integration:* ]]; then part=(--shard="$shard/${#versions[@]}"); fi
        echo "[test] ---- $project ${part[*]} on Node $version ----"
        report=".local/vitest-node${version%%.*}-${project/:/-}-report.json"
        PATH="$bin:$PATH" SQS_JOBS_TEST_LEG=partial npx vitest run --project "$project" "${part[@]}" --exclude 'test/integration/example-*.test.ts' \
          --reporter=default --reporter=json --outputFile.json="$report" || leg_status=$?
      done
      exit "$leg_status"
    ) >".local/leg-$version.log" 2>&1 &
    legs+=("$!:$version")
    for project in unit "integration:${stacks[0]}"; do reports+=(".local/vitest-node${version%%.*}-${project/:/-}-report.json"); done
  done
  for leg in "${legs[@]}"; do
    wait "${leg%%:*}" || status=1
    echo "[test] ---- Node ${leg#*:}: unit and integration:${stacks[0]} (its output, from .local/leg-${leg#*:}.log) ----" >&2
    cat ".local/leg-${leg#*:}.log" >&2
  done
  # The CDK construct (sqs-jobs/cdk): offline synth and template assertions.
  echo "[test] ---- cdk ----" >&2
  npx vitest run --project cdk --reporter=default --reporter=json --outputFile.json=.local/vitest-cdk-report.json || status=$?
  reports+=(.local/vitest-cdk-report.json)
  # The fault and load suite, at the reduced scale that fits CI (`npm run test:faults` for full).
  FAULTS_SCALE=ci bash scripts/faults.sh || status=$?
  reports+=(.local/vitest-faults-report.json)
fi
# Per report, then one plain closing line that any CI can read, over every report of this run.
WARNING="$warning" node -e '
  const fs = require("fs");
  let passed = 0, failed = 0, skipped = 0;
  for (const f of process.argv.slice(1)) {
    if (!fs.existsSync(f)) { console.log(`[test] ${f}: no report (the run did not finish)`); continue; }
    const r = JSON.parse(fs.readFileSync(f, "utf8"));
    const ends = r.testResults.map((t) => t.endTime).filter(Boolean);
    const seconds = ends.length ? (Math.max(...ends) - r.startTime) / 1000 : 0;
    const name = f.replace(/^\.local\/vitest-?/, "").replace(/-?report\.json$/, "").replace(/^integration-/, "integration:") || "vitest";
    const broken = !r.success && r.numTotalTests === 0 ? "  RAN NO TEST: see its output above" : "";
    // A test that passed with failure messages passed on its second try (the integration projects retry once).
    const retried = r.testResults.flatMap((t) => t.assertionResults.filter((a) => a.status === "passed" && (a.failureMessages ?? []).length > 0).map((a) => `${t.name.replace(process.cwd() + "/", "")} > ${a.fullName}`));
    const again = retried.length > 0 ? ` (${retried.length} on a second try)` : "";
    console.log(`[test] ${name.padEnd(24)} ${r.numPassedTests} passed${again}, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped  (${seconds.toFixed(1)} s)${broken}`);
    for (const t of retried) console.log(`[test]   passed on a second try: ${t}`);
    // The failures again, here at the end, where a CI that keeps only the tail of the log shows them.
    for (const t of r.testResults) {
      for (const a of t.assertionResults.filter((a) => a.status === "failed")) {
        const first = String((a.failureMessages ?? [])[0] ?? "").split("\n")[0].slice(0, 300);
        console.log(`[test]   FAILED: ${t.name.replace(process.cwd() + "/", "")} > ${a.fullName}: ${first}`);
      }
      if (t.status === "failed" && t.assertionResults.length === 0) console.log(`[test]   FAILED: ${t.name.replace(process.cwd() + "/", "")}: ${String(t.message ?? "").split("\n")[0].slice(0, 300)}`);
    }
    passed += r.numPassedTests; failed += r.numFailedTests; skipped += r.numPendingTests + r.numTodoTests;
  }
  if (process.env.WARNING) console.log(`[test] WARNING: ${process.env.WARNING}`);
  console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
' "${reports[@]}" || true
if ((lint_status != 0)); then echo "[test] FAILED: lint, the architecture rules or the docs site (their output is above)"; fi
exit $status
