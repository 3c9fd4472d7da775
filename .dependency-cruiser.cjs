/**
 * Architecture rules for src/, checked by `npm run lint:deps` (part of `npm test`). There are no
 * exceptions: any import that breaks a rule fails the run.
 */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No import cycles, type-only imports included.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'sdk-only-in-adapters',
      comment: 'The AWS SDK and OpenTelemetry are used only by adapters (src/adapters/, the SDK clients included).',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/adapters/' },
      to: { path: '(^|/)node_modules/(@aws-sdk/|@smithy/|@opentelemetry/)' },
    },
    {
      name: 'sockets-only-in-adapters',
      comment: 'Raw sockets (node:net and node:tls: the memcached client) are opened only by adapters.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/adapters/' },
      to: { dependencyTypes: ['core'], path: '^(node:)?(net|tls)$' },
    },
    {
      name: 'cdk-only-in-cdk',
      comment: 'aws-cdk-lib and constructs (optional peers) are used only by the CDK construct, src/cdk/ (sqs-jobs/cdk).',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/cdk/' },
      to: { path: '(^|/)node_modules/(aws-cdk-lib|constructs)/' },
    },
    {
      name: 'cdk-stands-apart',
      comment:
        'Nothing else in sqs-jobs imports the CDK construct (an app without aws-cdk-lib must load every other entry), and the construct takes only names and rules from the core and ops, never a worker, producer or adapter.',
      severity: 'error',
      from: { path: '^src/cdk/' },
      to: { path: '^src/', pathNot: '^src/(cdk|core|ops)/' },
    },
    {
      name: 'nothing-imports-cdk',
      comment: 'Only src/cdk/ imports src/cdk/.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/cdk/' },
      to: { path: '^src/cdk/' },
    },
    {
      name: 'ports-speak-core',
      comment:
        'A port says what the core needs, in sqs-jobs words: it imports only core/ (the vocabulary) and other ports, never the SDK or an adapter. (The swc parser does not mark type-only imports, so "types only" is not checked here.)',
      severity: 'error',
      from: { path: '^src/ports/' },
      to: { path: '^src/', pathNot: '^src/(ports|core)/' },
    },
    {
      name: 'ports-not-to-adapters',
      severity: 'error',
      from: { path: '^src/ports/' },
      to: { path: '^src/adapters/|node_modules/@aws-sdk/' },
    },
    {
      name: 'fleet-speaks-ports',
      comment:
        'src/fleet/ writes each fleet-wide protocol (the dedupe lock, permits, rate limits, allowances, the meters) once, over the key-value port: it imports core/, ports/ and itself, never an adapter (memcached is one implementation of the port, MemoryKeyValues the other).',
      severity: 'error',
      from: { path: '^src/fleet/' },
      to: { path: '^src/', pathNot: '^src/(fleet|ports|core)/' },
    },
    {
      name: 'schedules-fire-through-ports',
      comment:
        'src/schedules/ decides when a schedule fires and fires it through its ports (definitions, occurrences in a zone, catch-up, the tick): it speaks core, ports and itself, and reaches no adapter, worker or producer.',
      severity: 'error',
      from: { path: '^src/schedules/' },
      to: { path: '^src/', pathNot: '^src/(core|ports|schedules)/' },
    },
    {
      name: 'core-is-vocabulary',
      comment: 'src/core/ is the vocabulary everything else speaks (jobs, the envelope, messages, errors, limits): it imports only itself.',
      severity: 'error',
      from: { path: '^src/core/' },
      to: { path: '^src/', pathNot: '^src/core/' },
    },
    {
      name: 'config-reads-core-only',
      comment: 'src/config/ turns options and the environment into settings; it knows the vocabulary, nothing else.',
      severity: 'error',
      from: { path: '^src/config/' },
      to: { path: '^src/', pathNot: '^src/(core|config)/' },
    },
    {
      name: 'features-point-one-way',
      comment:
        'Feature folders depend one way: fan-out -> producer -> status -> ports/core. The producer never reaches for fan-out, status for either, and none of them for the worker, ops, metrics or cli.',
      severity: 'error',
      from: { path: '^src/(producer|status|fan-out)/' },
      to: { path: '^src/(worker|ops|metrics|cli)/' },
    },
    {
      name: 'worker-intake-knows-no-run',
      comment:
        "Inside the worker, a message flows one way: intake/ receives and orders held messages and never reaches for what runs, ends or batches them (run/, fate/, batch/, turns/, the delivery).",
      severity: 'error',
      from: { path: '^src/worker/intake/' },
      to: { path: '^src/worker/(run|fate|batch|turns)/|^src/worker/delivery[.]ts$' },
    },
    {
      name: 'worker-run-does-not-settle',
      comment:
        'The run phase decides, it does not act: run/ and turns/ never import settle or the coalescers that carry its deletes, hand-backs and re-sends (only fate/ settles a message).',
      severity: 'error',
      from: { path: '^src/worker/(run|turns)/' },
      to: { path: '^src/worker/fate/(settle|coalescers|conclude|keep)[.]ts$' },
    },
    {
      name: 'producer-before-fan-out',
      severity: 'error',
      from: { path: '^src/producer/' },
      to: { path: '^src/fan-out/' },
    },
    {
      name: 'status-before-producer',
      severity: 'error',
      from: { path: '^src/status/' },
      to: { path: '^src/(producer|fan-out)/' },
    },
    {
      name: 'http-is-a-front',
      comment:
        'src/http/ puts the producer and the status store behind HTTP: it speaks core, ports, producer and status, and never reaches for the worker, ops, metrics, the cli or an adapter (the producer wires its own).',
      severity: 'error',
      from: { path: '^src/http/' },
      to: { path: '^src/(worker|ops|metrics|cli|adapters|fan-out)/' },
    },
    {
      name: 'nothing-imports-the-http-api',
      comment:
        'Nothing in the library depends on the HTTP front (only its users do), but the dashboard (another front, mounted by the same adapters) and the CLI (which serves the dashboard).',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(http|dashboard|cli)/' },
      to: { path: '^src/http/' },
    },
    {
      name: 'dashboard-is-a-front',
      comment:
        "src/dashboard/ shows what SQS, the metrics and the job store say and acts through ops and status: it never reaches for the worker, the metrics' writers, fan-out or the cli.",
      severity: 'error',
      from: { path: '^src/dashboard/' },
      to: { path: '^src/(worker|metrics|cli|fan-out)/' },
    },
    {
      name: 'dashboard-uses-http-mounting-only',
      comment: 'The dashboard shares the HTTP front\'s mounting contract, not its API.',
      severity: 'error',
      from: { path: '^src/dashboard/' },
      to: { path: '^src/http/', pathNot: '^src/http/mountable[.]ts$' },
    },
    {
      name: 'nothing-imports-the-cli',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/cli/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'nothing-imports-the-entry',
      comment: 'src/index.ts and the index.ts of adapters/, testing/ and http/ are the public entries: inside src/, import the module itself.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^src/(adapters/|testing/|http/)?index[.]ts$' },
    },
    {
      name: 'nothing-imports-testing',
      comment: 'src/testing/ (in-memory fakes, a handler runner) is for tests, never for the product.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/testing/' },
      to: { path: '^src/testing/' },
    },
    {
      name: 'core-does-not-import-adapters',
      comment:
        'Only the wiring (a wiring.ts per entry point: worker, producer, status, ops, metrics, dashboard, lambda; the CLI) picks adapters; the core talks to ports.',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/(adapters|cli)/', '^src/((worker|producer|status|ops|metrics|dashboard|lambda)/)?wiring[.]ts$'] },
      to: { path: '^src/adapters/' },
    },
  ],
  options: {
    // TypeScript 7 has no compiler API for dependency-cruiser to parse with; swc reads the sources.
    parser: 'swc',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^dist/' },
  },
};
