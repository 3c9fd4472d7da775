/**
 * Architecture rules for src/, checked by `npm run lint:deps` (part of `npm test`).
 * .dependency-cruiser-known-violations.json lists what broke a rule when the rule came in (issue 18
 * moves those to zero); anything new fails. Regenerate it only by removing entries.
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
      comment: 'The AWS SDK and memjs are used only by adapters (src/adapters/, and the client setup in src/aws/).',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(adapters|aws)/' },
      to: { path: '(^|/)node_modules/(@aws-sdk/|@smithy/|memjs/)' },
    },
    {
      name: 'ports-are-types',
      comment: 'A port says what the core needs, in sqs-jobs words: it imports types only, and nothing from adapters or the SDK.',
      severity: 'error',
      from: { path: '^src/ports/' },
      to: { pathNot: '^src/ports/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'ports-not-to-adapters',
      severity: 'error',
      from: { path: '^src/ports/' },
      to: { path: '^src/adapters/|node_modules/(@aws-sdk/|memjs/)' },
    },
    {
      name: 'nothing-imports-the-cli',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/cli/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'nothing-imports-the-entry',
      comment: 'src/index.ts is the public API: inside src/, import the module itself.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^src/index\\.ts$' },
    },
    {
      name: 'core-does-not-import-adapters',
      comment: 'Only the wiring (worker/wiring.ts, the CLI) picks adapters; the core talks to ports.',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/(adapters|aws|cli)/', '^src/(worker/)?wiring[.]ts$'] },
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
