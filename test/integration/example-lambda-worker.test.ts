import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleStack, installExample, jobView, startScript, synthExample, typecheckExample } from '../helpers/example.js';
import { packTarball } from '../helpers/pack.js';
import { LOCAL_STACK, eventually } from '../helpers/stack.js';

/*
 * examples/lambda-worker as a user runs it: the package from `npm pack` installed into a copy of
 * the example with aws-cdk-lib, constructs, the cdk CLI and esbuild from the registry; its own
 * tests (`npm test`: the handler on an in-memory queue); `npx cdk synth` of its app on the
 * construct's `runtime: 'lambda'` (offline: no account, no Docker, the handler bundled by esbuild);
 * then `npm run local` (the mapping's part, on the local stack) running an enqueued job to completed.
 */

const run = promisify(execFile);
const tmp = mkdtempSync(join(tmpdir(), 'sqs-jobs-lambda-'));
let app: string;
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe.skipIf(LOCAL_STACK !== 'localstack')('examples/lambda-worker, installed from npm pack', () => {
  beforeAll(async () => {
    app = await installExample('lambda-worker', tmp, await packTarball(tmp));
  }, 600_000);

  it('type-checks (its JavaScript, checkJs) against the packed types', () => typecheckExample(app), 120_000);

  it('its own tests pass: `npm test` runs the handler on an in-memory queue', async () => {
    const { stdout } = await run('npm', ['test'], { cwd: app, timeout: 120_000 });
    expect(stdout).toMatch(/pass 1/);
    expect(stdout).toMatch(/fail 0/);
  }, 120_000);

  it('`npx cdk synth` makes the function, its mapping with partial batch responses, the queue’s visibility six times the timeout', async () => {
    const ofType = await synthExample(app, 'Thumbnails');
    const [fn] = ofType('AWS::Lambda::Function').filter((f) => JSON.stringify(f.Properties).includes('createLambdaHandler'));
    expect(fn?.Properties).toMatchObject({ Runtime: 'nodejs22.x', Timeout: 40, Handler: 'index.handler' });
    expect(ofType('AWS::Lambda::EventSourceMapping')[0]?.Properties).toMatchObject({
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BatchSize: 10,
      ScalingConfig: { MaximumConcurrency: 5 },
    });
    expect(ofType('AWS::SQS::Queue').find((q) => q.Properties.QueueName === 'thumbnails')?.Properties.VisibilityTimeout).toBe(240);
    expect(ofType('AWS::ECS::Service')).toHaveLength(0);
    expect(ofType('AWS::ElastiCache::CacheCluster')).toHaveLength(0);
  }, 300_000);

  it('runs locally as its README says: `npm run local` feeds the handler, which runs an enqueued job to completed', async () => {
    const env = await exampleStack(app, `thumbs-${randomUUID().slice(0, 8)}`, true);
    const local = startScript(app, 'local', env);
    try {
      const { stdout } = await run('npm', ['run', '--silent', 'enqueue', '--', 'uploads/cat.jpg'], { cwd: app, env });
      const { jobId } = JSON.parse(stdout) as { jobId: string };
      const status = () => jobView(app, env, jobId);
      await eventually(async () => (await status()).state === 'completed', 'the job to complete', 30_000);
      expect(local.output()).toMatch(/"msg":"thumbnail made"/);
      expect(local.output()).toMatch(/\{"records":1,"failed":0\}/);
    } finally {
      await local.stop();
    }
    expect(local.output()).not.toMatch(/"level":50/);
  }, 120_000);
});
