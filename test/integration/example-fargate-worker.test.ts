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
 * examples/fargate-worker as a user runs it: the package from `npm pack` installed into a copy of
 * the example with aws-cdk-lib, constructs and the cdk CLI from the registry; `npx cdk synth` of its
 * app on the `sqs-jobs/cdk` construct (offline: no account, no Docker), then the worker the image
 * runs (`npm run worker`) and `npm run enqueue` against the local stack. Once, on LocalStack.
 */

const run = promisify(execFile);
const tmp = mkdtempSync(join(tmpdir(), 'sqs-jobs-fargate-'));
let app: string;
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe.skipIf(LOCAL_STACK !== 'localstack')('examples/fargate-worker, installed from npm pack', () => {
  beforeAll(async () => {
    app = await installExample('fargate-worker', tmp, await packTarball(tmp)); // with aws-cdk-lib, constructs, aws-cdk
  }, 600_000);

  it('type-checks (its JavaScript, checkJs) with TypeScript 5.9 against the packed types', () => typecheckExample(app), 120_000);

  it('`npx cdk synth` makes the stack from the construct: queue, DLQ, table, service running its jobs module, and the uploader’s rights', async () => {
    const ofType = await synthExample(app, 'Thumbnails');
    expect(ofType('AWS::SQS::Queue').map((q) => q.Properties.QueueName)).toEqual(expect.arrayContaining(['thumbnails', 'thumbnails-dlq']));
    expect(ofType('AWS::DynamoDB::Table').map((t) => t.Properties.TableName)).toEqual(['thumbnails-jobs']);
    expect(ofType('AWS::ElastiCache::CacheCluster')).toHaveLength(1);
    const [container] = ofType('AWS::ECS::TaskDefinition')[0]!.Properties.ContainerDefinitions as {
      Command: string[];
      StopTimeout: number;
    }[];
    expect(container!.Command.slice(0, 5)).toEqual(['worker', '--jobs', 'jobs.js', '--concurrency', '16']);
    expect(container!.StopTimeout).toBe(30 + 20 + 10);
    const uploader = ofType('AWS::IAM::Policy').find((p) => JSON.stringify(p.Properties.Roles).includes('UploaderRole'))!;
    const actions = (uploader.Properties.PolicyDocument as { Statement: { Action: string | string[] }[] }).Statement.map((s) => s.Action);
    expect(actions).toEqual(
      expect.arrayContaining([
        ['sqs:SendMessage', 'sqs:GetQueueAttributes'],
        ['dynamodb:UpdateItem', 'dynamodb:PartiQLInsert', 'dynamodb:PutItem', 'dynamodb:GetItem', 'dynamodb:DeleteItem'],
      ]),
    );
    expect(actions).toHaveLength(2);
  }, 300_000);

  it('runs locally as its README says: the worker runs an enqueued thumbnail job to completed, and stops on SIGTERM', async () => {
    const env = await exampleStack(app, `thumbs-${randomUUID().slice(0, 8)}`, true);
    const worker = startScript(app, 'worker', env);
    try {
      const { stdout } = await run('npm', ['run', '--silent', 'enqueue', '--', 'uploads/cat.jpg'], { cwd: app, env });
      const { jobId } = JSON.parse(stdout) as { jobId: string };
      const status = () => jobView(app, env, jobId);
      await eventually(async () => (await status()).state === 'completed', 'the job to complete', 30_000);
      expect(worker.output()).toMatch(/"msg":"thumbnail made"/);
      expect(await status()).toMatchObject({
        jobName: 'thumbnail.make',
        result: { thumbnail: expect.stringMatching(/^thumbnails\/320\//) },
      });
    } finally {
      await worker.stop();
    }
    const output = worker.output();
    expect(output).toMatch(/"msg":"worker stopped"/); // a graceful stop, as ECS's SIGTERM gets
    expect(output).not.toMatch(/"level":50/); // no error logged
  }, 120_000);
});
