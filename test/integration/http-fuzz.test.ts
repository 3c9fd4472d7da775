import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { z } from 'zod';
import { createDynamoClient } from '../../src/adapters/aws-clients.js';
import { createJobTable } from '../../src/adapters/dynamodb-store.js';
import { defineJob } from '../../src/core/job.js';
import { createJobsApi } from '../../src/http/index.js';
import { createProducer } from '../../src/producer/producer.js';
import { type AdapterName, adapters } from '../helpers/http-adapters.js';
import { LOCAL_DYNAMODB, LOCAL_ENV, LOCAL_STACK, freshQueues, sqsClient } from '../helpers/stack.js';

// The HTTP API fuzzed from its own OpenAPI document by schemathesis (PyPI; installed into
// .venv-schemathesis by scripts/ensure-schemathesis.sh, which `npm test` runs), through each
// adapter docs/guide/http-api.md names, mounted as it shows: requests the schema allows and requests it
// forbids, methods it does not declare, and stateful chains (enqueue, read, cancel). Every check
// runs (test/integration/schemathesis.toml says so, and names the one exception and why); any
// failure, error or warning fails the test. Runs in the first stack's project.
const ST = '.venv-schemathesis/bin/st';
const CONFIG = 'test/integration/schemathesis.toml';
const first = (process.env.SQS_JOBS_TEST_STACKS ?? 'localstack moto').split(/[\s,]+/)[0];

/**
 * One mount per adapter: Node's http, Express (under a prefix: the path Express rewrites), Fastify,
 * Hono. 25 examples per operation and phase each, the same seed for all (~10 s an adapter here).
 */
const FUZZED: readonly AdapterName[] = ['node:http', 'express under /api', 'fastify', 'hono'];
const MAX_EXAMPLES = 25;
const SEED = 20261125;

const jobs = [
  defineJob({
    name: 'resize-image',
    args: z.object({
      imageId: z.string().min(1).max(64),
      width: z.number().int().min(1).max(4_096),
      format: z.enum(['png', 'webp']).default('webp'),
    }),
    handle: () => {},
  }),
  defineJob({
    name: 'team.invite',
    args: z.object({
      email: z.email(),
      roles: z
        .array(z.enum(['admin', 'member']))
        .min(1)
        .max(3),
      note: z.string().max(200).optional(),
      meta: z.object({ source: z.string(), campaign: z.string().optional() }).optional(),
    }),
    handle: () => {},
  }),
  defineJob({ name: 'nightly-report', args: z.object({}), handle: () => {} }),
];

const sqs = sqsClient();
const dynamo = createDynamoClient({ endpoint: LOCAL_DYNAMODB, region: 'us-east-1' }, {}, {});
const reports = mkdtempSync(join(tmpdir(), 'sqs-jobs-fuzz-'));
afterAll(() => {
  sqs.destroy();
  dynamo.destroy();
  rmSync(reports, { recursive: true, force: true });
});

/** What schemathesis's JSON report says of a run (the parts checked here). */
interface Report {
  readonly exit_code: number;
  readonly complete: boolean;
  readonly stop_reason: string;
  readonly running_time: number;
  readonly operations: { readonly total: number; readonly tested: number; readonly errored: number; readonly skipped: number };
  readonly test_cases: { readonly generated: number };
  readonly failures: readonly unknown[];
  readonly errors: readonly unknown[];
  readonly warnings: Readonly<Record<string, readonly unknown[]>>;
}

it.runIf(LOCAL_STACK === first).each(FUZZED)(
  'schemathesis, every check, through %s: no failure, error or warning, for inputs the schema allows or forbids',
  async (adapter) => {
    if (!existsSync(ST)) throw new Error(`${ST} is missing: run bash scripts/ensure-schemathesis.sh (npm test does)`);
    // Each adapter its own queue and job store: a finding reproduces with its own run alone.
    const table = `fuzz-${randomUUID().slice(0, 8)}`;
    await createJobTable(dynamo, table);
    const { queueUrl } = await freshQueues(sqs, 'http-fuzz');
    const producer = createProducer({ queueUrl, jobs, store: { table, endpoint: LOCAL_DYNAMODB } }, LOCAL_ENV);
    const server = await adapters[adapter](createJobsApi({ producer, basePath: '/api' }));
    const reportPath = join(reports, `${adapter.replace(/\W+/g, '-')}.json`);
    try {
      const { code, output } = await schemathesis([
        '--config-file',
        CONFIG,
        'run',
        `${server.url}/api/openapi.json`,
        '--mode',
        'all',
        '--max-examples',
        String(MAX_EXAMPLES),
        '--workers',
        '1',
        '--request-timeout',
        '20',
        '--no-color',
        '--seed',
        String(SEED),
        '--report',
        'json',
        '--report-json-path',
        reportPath,
      ]);
      const report = existsSync(reportPath) ? (JSON.parse(readFileSync(reportPath, 'utf8')) as Report) : undefined;
      const warned = Object.entries(report?.warnings ?? {}).filter(([, list]) => list.length > 0);
      const clean =
        code === 0 &&
        report !== undefined &&
        report.complete &&
        report.failures.length === 0 &&
        report.errors.length === 0 &&
        warned.length === 0;
      // The whole report when something is wrong; one line (how many cases, how long) otherwise.
      console.log(
        clean
          ? `${adapter}: ${report.test_cases.generated} cases over ${report.operations.tested} operations in ${report.running_time.toFixed(1)} s, no issues`
          : output,
      );
      expect(code).toBe(0);
      expect(report).toMatchObject({ exit_code: 0, complete: true, stop_reason: 'completed', failures: [], errors: [] });
      expect(warned).toEqual([]);
      // Every operation of the document was tested (none skipped or errored), with cases to show for it.
      expect(report!.operations).toMatchObject({ total: 5, tested: 5, errored: 0, skipped: 0 });
      expect(report!.test_cases.generated).toBeGreaterThan(100);
    } finally {
      await server.close();
      producer.close();
    }
  },
  600_000,
);

function schemathesis(args: readonly string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(ST, args, { env: { ...process.env, SCHEMATHESIS_HOOKS: '' } });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d));
    child.stderr.on('data', (d: Buffer) => (output += d));
    child.on('close', (code) => resolve({ code, output }));
  });
}
