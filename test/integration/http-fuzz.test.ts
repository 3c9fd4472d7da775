import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { createDynamoClient } from '../../src/adapters/aws-clients.js';
import { createJobTable } from '../../src/adapters/dynamodb-store.js';
import { defineJob } from '../../src/core/job.js';
import { createJobsApi, nodeHandler } from '../../src/http/index.js';
import { createProducer, type Producer } from '../../src/producer/producer.js';
import { LOCAL_DYNAMODB, LOCAL_ENV, LOCAL_STACK, freshQueues, sqsClient } from '../helpers/stack.js';

// The HTTP API fuzzed from its own OpenAPI document by schemathesis (PyPI; installed into
// .venv-schemathesis by scripts/ensure-schemathesis.sh, which `npm test` runs): requests the
// schema allows and requests it forbids, and no answer may be a 5xx or break the document's
// promises (status codes, content types, response schemas). Runs in the first stack's project.
const ST = '.venv-schemathesis/bin/st';
const first = (process.env.SQS_JOBS_TEST_STACKS ?? 'localstack moto').split(/[\s,]+/)[0];

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
let producer: Producer;
let server: Server;
let base: string;

beforeAll(async () => {
  if (LOCAL_STACK !== first) return;
  const table = `fuzz-${randomUUID().slice(0, 8)}`;
  await createJobTable(dynamo, table);
  const { queueUrl } = await freshQueues(sqs, 'http-fuzz');
  producer = createProducer({ queueUrl, jobs, store: { table, endpoint: LOCAL_DYNAMODB } }, LOCAL_ENV);
  server = createServer(nodeHandler(createJobsApi({ producer, basePath: '/api' })));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => (server === undefined ? r(undefined) : server.close(r)));
  producer?.close();
  sqs.destroy();
  dynamo.destroy();
});

it.runIf(LOCAL_STACK === first)(
  'schemathesis finds no 5xx and no broken promise in the API, for inputs the schema allows or forbids',
  async () => {
    if (!existsSync(ST)) throw new Error(`${ST} is missing: run bash scripts/ensure-schemathesis.sh (npm test does)`);
    const args = [
      'run',
      `${base}/api/openapi.json`,
      '--checks',
      'all',
      // Every check but one: DELETE cancels a job and leaves its record, so GET after DELETE answers
      // 200 with status "cancelled" (what a client polls for). use_after_free wants a 404 there.
      '--exclude-checks',
      'use_after_free',
      '--mode',
      'all',
      '--max-examples',
      '25',
      '--workers',
      '1',
      '--request-timeout',
      '20',
      '--no-color',
      '--seed',
      '20261125',
    ];
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn(ST, args, { env: { ...process.env, SCHEMATHESIS_HOOKS: '' } });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d));
      child.stderr.on('data', (d: Buffer) => (out += d));
      child.on('close', (c) => resolve({ code: c, output: out }));
    });
    // The whole report when something failed; its last line (how many cases, how long) otherwise.
    console.log(code === 0 ? output.trim().split('\n').at(-1) : output);
    expect(output).toMatch(/passed/i);
    expect(code).toBe(0);
  },
  600_000,
);
