import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { LOCAL_DYNAMODB, LOCAL_ENV, LOCAL_STACK, eventually, sleep } from '../helpers/stack.js';
import { installExample, typecheckExample } from '../helpers/example.js';
import { packTarball } from '../helpers/pack.js';

/*
 * examples/http-api as a user runs it: the package made by `npm pack` and installed into a copy of
 * the example (with its own express and zod), the CLI from that install to make the queues and the
 * table, then `node worker.js` and `node server.js` against the local stack, driven over HTTP.
 * Once, on LocalStack (the example's README names it).
 */

const run = promisify(execFile);
const tmp = mkdtempSync(join(tmpdir(), 'sqs-jobs-example-'));
const children: ChildProcess[] = [];
afterAll(() => {
  for (const c of children) c.kill('SIGTERM');
  rmSync(tmp, { recursive: true, force: true });
});

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

describe.skipIf(LOCAL_STACK !== 'localstack')('examples/http-api, installed from npm pack', () => {
  it('type-checks; creates its queues and table with the CLI, serves 202, status, 422, cancel and OpenAPI, and starts high ahead of low', async () => {
    const tarball = await packTarball(tmp);
    // As a user installs it (the dist is built above: the package's prepare script would need its devDependencies).
    const app = await installExample('http-api', tmp, tarball);
    await typecheckExample(app);
    expect(JSON.parse(readFileSync(join(app, 'node_modules/sqs-jobs/package.json'), 'utf8')).name).toBe('sqs-jobs');

    const name = `ex-${randomUUID().slice(0, 8)}`;
    const env = {
      ...process.env,
      ...LOCAL_ENV,
      AWS_ENDPOINT_URL_DYNAMODB: LOCAL_DYNAMODB,
      SQS_JOBS_JOB_TABLE: name,
      SQS_JOBS_METRICS: 'off',
      AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    };
    const cli = join(app, 'node_modules/.bin/sqs-jobs');
    const queues = JSON.parse((await run(cli, ['queues', 'create', '--name', name, '--tiers', '--json'], { cwd: app, env })).stdout) as {
      queueUrl: string;
      lanes: { high: string; low: string };
    };
    expect(queues.lanes.high).toMatch(new RegExp(`/${name}-high$`));
    await run(cli, ['store', 'create', '--table', name], { cwd: app, env });

    const port = await freePort();
    const appEnv = { ...env, SQS_JOBS_QUEUE_URL: queues.queueUrl, PORT: String(port) };
    const start = (file: string) => {
      const child = spawn('node', [file], { cwd: app, env: appEnv, stdio: ['ignore', 'pipe', 'pipe'] });
      children.push(child);
      let out = '';
      child.stdout!.on('data', (d) => (out += d));
      child.stderr!.on('data', (d) => (out += d));
      return () => out;
    };
    const workerOut = start('worker.js');
    const serverOut = start('server.js');
    await eventually(() => serverOut().includes('listening on'), 'the server to listen', 30_000);
    await eventually(() => workerOut().includes('worker started'), 'the worker to start', 30_000);

    const base = `http://127.0.0.1:${port}/api`;
    // As a client of the API does: a 429 (admission: before the workers' drain rate is known, at
    // most `firstMark` jobs wait beyond what they hold) is sent again after its Retry-After.
    const post = async (job: string, body: unknown) => {
      for (let tries = 1; ; tries++) {
        const res = await fetch(`${base}/jobs/${job}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        if (res.status !== 429 || tries === 5) return res;
        await sleep(Number(res.headers.get('retry-after')) * 1000);
      }
    };
    const status = async (id: string) => (await (await fetch(`${base}/jobs/${id}`)).json()) as Record<string, unknown>;

    // Eight 2-second reports (low) fill the worker's 4 slots twice; the reset (high) comes last.
    const reports: string[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await post('build-report', { reportId: `r${i}`, steps: 2 });
      expect(res.status).toBe(202);
      expect(res.headers.get('location')).toMatch(/^\/api\/jobs\//);
      reports.push(((await res.json()) as { jobId: string }).jobId);
    }
    const reset = ((await (await post('send-reset', { email: 'ada@example.com' })).json()) as { jobId: string }).jobId;
    await eventually(async () => (await status(reset)).status === 'completed', 'the reset to complete', 60_000);
    await eventually(
      async () => (await Promise.all(reports.map(status))).every((s) => s.status === 'completed'),
      'every report to complete',
      60_000,
    );
    const started = async (id: string) => Date.parse(String((await status(id)).startedAt));
    const lastReport = Math.max(...(await Promise.all(reports.map(started))));
    // Strict tiers: the reset started in the second round, not after all eight reports.
    expect(await started(reset)).toBeLessThanOrEqual(lastReport);
    const done = await status(reports[0]!);
    expect(done).toMatchObject({ status: 'completed', itemCount: 2, itemProgress: 2, result: { reportId: 'r0' } });

    // Cancel a running report: it stops, and the status says so.
    const long = ((await (await post('build-report', { reportId: 'long', steps: 60 })).json()) as { jobId: string }).jobId;
    await eventually(async () => (await status(long)).status === 'running', 'the long report to run', 30_000);
    const cancel = await fetch(`${base}/jobs/${long}`, { method: 'DELETE' });
    expect(cancel.status).toBe(202);
    await eventually(async () => (await status(long)).status === 'cancelled', 'the long report to be cancelled', 30_000);

    // Bad input names the field; the OpenAPI document types the jobs.
    const bad = await post('send-reset', { email: 'not-an-email' });
    expect(bad.status).toBe(422);
    expect(JSON.stringify(await bad.json())).toContain('args.email');
    const doc = (await (await fetch(`${base}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/api/jobs/build-report', '/api/jobs/send-reset']));
  }, 420_000);
});
