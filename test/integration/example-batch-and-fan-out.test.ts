import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleStack, installExample, startScript, typecheckExample } from '../helpers/example.js';
import { packTarball } from '../helpers/pack.js';
import { LOCAL_STACK, eventually } from '../helpers/stack.js';

/*
 * examples/batch-job and examples/fan-out-import as their READMEs run them: the package from
 * `npm pack` installed into a copy of each, type-checked with TypeScript 5.9, the queue (and table)
 * made with the CLI, `npm run worker` and `npm run enqueue` against the local stack. Once, on LocalStack.
 */

const run = promisify(execFile);
const tmp = mkdtempSync(join(tmpdir(), 'sqs-jobs-examples-'));
let tarball: string;
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe.skipIf(LOCAL_STACK !== 'localstack')('examples/batch-job and examples/fan-out-import, installed from npm pack', () => {
  beforeAll(async () => {
    tarball = await packTarball(tmp);
  }, 300_000);

  it('batch-job: 300 documents, each its own message, are indexed in batches per tenant, each document once', async () => {
    const app = await installExample('batch-job', tmp, tarball);
    await typecheckExample(app);
    const env = await exampleStack(app, `docs-${randomUUID().slice(0, 8)}`, false);
    const worker = startScript(app, 'worker', env);
    try {
      const { stdout } = await run('npm', ['run', '--silent', 'enqueue'], { cwd: app, env });
      expect(JSON.parse(stdout)).toEqual({ enqueued: 300 });
      const indexed = () => {
        try {
          return readdirSync(join(app, 'index')).flatMap((f) =>
            readFileSync(join(app, 'index', f), 'utf8')
              .trim()
              .split('\n'),
          );
        } catch {
          return [];
        }
      };
      await eventually(() => indexed().length >= 300, 'every document indexed', 60_000);
      const docIds = indexed().map((l) => (JSON.parse(l) as { docId: string }).docId);
      expect(new Set(docIds).size).toBe(300);
      expect(docIds).toHaveLength(300); // none twice
      for (const tenant of ['acme', 'globex', 'initech']) {
        expect(
          readFileSync(join(app, 'index', `${tenant}.ndjson`), 'utf8')
            .trim()
            .split('\n'),
        ).toHaveLength(100);
      }
      // The worker's log comes through a pipe and may trail the files a little.
      const batchSizes = () => [...worker.output().matchAll(/"size":(\d+),"msg":"indexed a batch"/g)].map((m) => Number(m[1]));
      await eventually(() => batchSizes().reduce((a, b) => a + b, 0) >= 300, 'every batch logged', 30_000);
      const batches = batchSizes();
      expect(batches.reduce((a, b) => a + b, 0)).toBe(300);
      expect(batches.length).toBeLessThan(300 / 5); // batched: not a call per document
      expect(Math.max(...batches)).toBeLessThanOrEqual(100);
    } finally {
      await worker.stop();
    }
    expect(worker.output()).toMatch(/"msg":"worker stopped"/);
  }, 240_000);

  it('fan-out-import: one job per row, the broken row dead-lettered with its reason, the completion once with the counts', async () => {
    const app = await installExample('fan-out-import', tmp, tarball);
    await typecheckExample(app);
    const env = await exampleStack(app, `imports-${randomUUID().slice(0, 8)}`, true);
    const cli = join(app, 'node_modules/.bin/sqs-jobs');
    const worker = startScript(app, 'worker', env);
    try {
      const { stdout } = await run('npm', ['run', '--silent', 'enqueue', '--', 'users.csv'], { cwd: app, env });
      const { jobId } = JSON.parse(stdout) as { jobId: string };
      const status = async (id: string) => JSON.parse((await run(cli, ['job', id, '--json'], { cwd: app, env })).stdout);
      await eventually(async () => (await status(jobId)).state === 'completed', 'the import to complete', 90_000);
      expect(await status(jobId)).toMatchObject({ jobName: 'import-file', fanOut: { total: 40 } });
      await eventually(() => /"msg":"import finished"/.test(worker.output()), 'the completion job to run', 30_000);
      const finished = [...worker.output().matchAll(/\{[^\n]*"msg":"import finished"[^\n]*\}/g)].map((m) => JSON.parse(m[0]));
      expect(finished).toEqual([expect.objectContaining({ file: 'users.csv', total: 40, succeeded: 39, failed: 1 })]);
      expect(readdirSync(join(app, 'imported'))).toHaveLength(39);
      const dead = (await run(cli, ['dlq', 'list', '--json'], { cwd: app, env })).stdout;
      expect(dead).toMatch(/row 17: /);
    } finally {
      await worker.stop();
    }
    expect(worker.output()).toMatch(/"msg":"worker stopped"/);
  }, 240_000);
});
