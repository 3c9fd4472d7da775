import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { SqsJobs } from '../../src/cdk/index.js';
import type { DeploySettingsInput } from '../../src/cdk/settings.js';

/*
 * The construct with `runtime: 'lambda'`: the jobs' function bundled by esbuild on this machine
 * (no Docker), one event source mapping per queue, the queue's visibility timeout from the
 * function's timeout, and what cannot be deployed refused at synth.
 */
const ENTRY = 'test/cdk/fixtures/lambda-handler.ts';

function lambdaStack(settings: DeploySettingsInput = {}) {
  const stack = new Stack(new App(), 'Test');
  const jobs = new SqsJobs(stack, 'Jobs', { ...settings, runtime: 'lambda', entry: ENTRY });
  return { stack, jobs, t: Template.fromStack(stack) };
}

// One synth (esbuild bundles the handler each time) shared by the assertions on the defaults.
const made = lambdaStack({ jobStore: {} });

describe("SqsJobs with runtime 'lambda'", () => {
  it('runs the jobs in a Node 22 function, its timeout twice p99, the queue’s visibility six times that', () => {
    made.t.hasResourceProperties('AWS::Lambda::Function', {
      Runtime: 'nodejs22.x',
      Timeout: 60,
      MemorySize: 1024,
      Environment: {
        Variables: Match.objectLike({
          SQS_JOBS_VISIBILITY_TIMEOUT: '360',
          SQS_JOBS_METRICS: 'emf',
          SQS_JOBS_QUEUE_URL: Match.anyValue(),
          SQS_JOBS_JOB_TABLE: Match.anyValue(),
        }),
      },
    });
    made.t.hasResourceProperties('AWS::SQS::Queue', { QueueName: 'jobs', VisibilityTimeout: 360 });
    expect(made.jobs.function).toBeDefined();
    expect(made.jobs.service).toBeUndefined();
  });

  it('maps every queue it serves (here with spillover), and tells the handler them all', () => {
    const t = lambdaStack({ spillover: true }).t;
    expect(Object.keys(t.findResources('AWS::Lambda::EventSourceMapping'))).toHaveLength(2);
    const fn = Object.values(t.findResources('AWS::Lambda::Function')).find(
      (f) => f.Properties.Environment?.Variables?.SQS_JOBS_QUEUE_URLS,
    );
    expect(JSON.stringify(fn?.Properties.Environment.Variables.SQS_JOBS_QUEUE_URLS)).toMatch(/JobQueue.*SpilloverQueue/);
  });

  it('maps the queue with ReportBatchItemFailures, the batch size and window, and a maximum concurrency', () => {
    made.t.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BatchSize: 10,
      ScalingConfig: { MaximumConcurrency: 10 },
    });
    const t = lambdaStack({ lambda: { batchSize: 500, maxBatchingWindowSeconds: 5, maxConcurrency: 50 } }).t;
    t.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      BatchSize: 500,
      MaximumBatchingWindowInSeconds: 5,
      ScalingConfig: { MaximumConcurrency: 50 },
    });
  });

  it('makes no VPC, cluster, service or memcached; keeps the DLQ, the alarms and the dashboard; the lock on the job table', () => {
    for (const type of ['AWS::EC2::VPC', 'AWS::ECS::Cluster', 'AWS::ECS::Service', 'AWS::ElastiCache::CacheCluster'])
      expect(Object.keys(made.t.findResources(type)), type).toHaveLength(0);
    made.t.hasResourceProperties('AWS::SQS::Queue', { QueueName: 'jobs-dlq' });
    expect(Object.keys(made.t.findResources('AWS::CloudWatch::Alarm')).length).toBeGreaterThanOrEqual(3);
    made.t.resourceCountIs('AWS::CloudWatch::Dashboard', 1);
    const role = made.t.findResources('AWS::IAM::Role', {
      Properties: { AssumeRolePolicyDocument: { Statement: [{ Principal: { Service: 'lambda.amazonaws.com' } }] } },
    });
    expect(Object.keys(role)).toHaveLength(1);
    const policies = JSON.stringify(made.t.findResources('AWS::IAM::Policy'));
    expect(policies).toContain('dynamodb:DeleteItem'); // the DynamoDB lock releases its keys
    expect(policies).not.toContain('cloudwatch:PutMetricData'); // metrics go out as EMF in the logs
  });

  it('bundles the handler into one ES module that loads in Node and exports the handler', async () => {
    const outdir = (made.stack.node.root as App).outdir;
    const bundles = readdirSync(outdir)
      .filter((d) => d.startsWith('asset.'))
      .map((d) => join(outdir, d, 'index.mjs'))
      .filter((f) => existsSync(f));
    expect(bundles).toHaveLength(1);
    const env = { ...process.env, SQS_JOBS_QUEUE_URL: 'https://sqs.us-east-1.amazonaws.com/000000000000/jobs', AWS_REGION: 'us-east-1' };
    const out = execFileSync(
      process.execPath,
      ['--input-type=module', '-e', `const m = await import(${JSON.stringify(bundles[0])}); console.log(typeof m.handler)`],
      {
        env,
        encoding: 'utf8',
      },
    );
    expect(out.trim()).toBe('function');
  });

  it('refuses at synth what cannot work, naming the setting', () => {
    expect(() => lambdaStack({ lambda: { timeoutSeconds: 300, visibilityTimeoutSeconds: 200 } })).toThrow(
      /lambda\.visibilityTimeoutSeconds: must be at least the function's timeout \(300 s\)/,
    );
    expect(() => lambdaStack({ lambda: { batchSize: 100 } })).toThrow(/lambda\.maxBatchingWindowSeconds: must be >= 1/);
    expect(() => lambdaStack({ jobStore: { schedules: true } })).toThrow(/scheduler: must be 'eventbridge' with runtime 'lambda'/);
    expect(() => new SqsJobs(new Stack(new App(), 'T'), 'J', { runtime: 'lambda' } as never)).toThrow(/needs entry/);
  });

  it('warns when the visibility timeout is under six times the function’s timeout, or there is no lock', () => {
    const { stack } = lambdaStack({ lambda: { timeoutSeconds: 60, visibilityTimeoutSeconds: 120 } });
    const warnings = Annotations.fromStack(stack).findWarning('*', Match.anyValue());
    const text = JSON.stringify(warnings);
    expect(text).toContain('under six times the function');
    expect(text).toContain('without the dedupe lock');
    expect(JSON.stringify(Annotations.fromStack(made.stack).findWarning('*', Match.anyValue()))).not.toContain('six times');
  });
});
