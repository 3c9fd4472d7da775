import { Annotations, Duration, Fn } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { functionTimeoutSeconds, lambdaVisibilitySeconds } from './lambda-settings.js';
import type { DeploySettings } from './settings.js';

/** What the Lambda workers are given of the construct: the handler file (`export const handler = createLambdaHandler(...)`). */
export interface LambdaWorkerProps {
  readonly runtime: 'lambda';
  /** The file that exports the handler, bundled with esbuild on this machine (no Docker): add `esbuild` to your devDependencies. */
  readonly entry: string;
  /** The handler's export name; default `handler`. */
  readonly handler?: string;
  /** esbuild settings on top of ours (minified, source maps, every module bundled). */
  readonly bundling?: nodejs.BundlingOptions;
}

interface LambdaParts {
  readonly role: iam.Role;
  readonly queue: sqs.IQueue;
  /** Every queue the jobs are served from: each gets a mapping. */
  readonly served: readonly sqs.IQueue[];
  readonly jobTableName: string | undefined;
}

/** AWS's guidance: a queue's visibility timeout at least six times its function's timeout. */
const VISIBILITY_PER_TIMEOUT = 6;

/**
 * The Lambda side: the function running the jobs, one SQS event source mapping per served queue
 * (ReportBatchItemFailures, the batch size and window, maximum concurrency), its environment, and a
 * warning when the queue's visibility timeout is under six times the function's timeout.
 */
export function addLambdaWorkers(scope: Construct, s: DeploySettings, props: LambdaWorkerProps, p: LambdaParts) {
  // The function's logs, on top of the worker's actions.
  p.role.addManagedPolicy(iam.ManagedPolicy.fromAwsManagedPolicyName('service-role/AWSLambdaBasicExecutionRole'));
  if (p.jobTableName === undefined)
    Annotations.of(scope).addWarningV2('sqs-jobs:no-lock', 'no jobStore: the function runs without the dedupe lock (at-least-once)');
  const timeout = functionTimeoutSeconds(s);
  const visibility = lambdaVisibilitySeconds(s);
  if (visibility < VISIBILITY_PER_TIMEOUT * timeout)
    Annotations.of(scope).addWarningV2(
      'sqs-jobs:visibility',
      `the queue's visibility timeout (${visibility} s) is under six times the function's timeout (${timeout} s), AWS's guidance: a record whose invocation is throttled may come back before it ran`,
    );
  const fn = new nodejs.NodejsFunction(scope, 'WorkerFunction', {
    entry: props.entry,
    handler: props.handler ?? 'handler',
    runtime: lambda.Runtime.NODEJS_22_X,
    architecture: lambda.Architecture.ARM_64,
    timeout: Duration.seconds(timeout),
    memorySize: s.lambda.memoryMiB,
    role: p.role,
    description: 'sqs-jobs: runs the jobs of its queues (createLambdaHandler)',
    environment: {
      SQS_JOBS_QUEUE_URL: p.queue.queueUrl,
      // Every queue it is mapped to (spillover, lanes, events' queues): the handler serves these.
      SQS_JOBS_QUEUE_URLS: Fn.join(
        ',',
        p.served.map((q) => q.queueUrl),
      ),
      SQS_JOBS_VISIBILITY_TIMEOUT: String(visibility),
      // EMF: metrics go out with the logs, no PutMetricData call within an invocation.
      SQS_JOBS_METRICS: 'emf',
      SQS_JOBS_METRICS_NAMESPACE: s.metricsNamespace,
      ...(p.jobTableName === undefined ? {} : { SQS_JOBS_JOB_TABLE: p.jobTableName }),
    },
    logGroup: new logs.LogGroup(scope, 'WorkerLogs', { retention: logs.RetentionDays.ONE_MONTH }),
    bundling: {
      minify: true,
      sourceMap: true,
      target: 'node22',
      format: nodejs.OutputFormat.ESM,
      // ESM output still meets CommonJS dependencies that call require().
      banner: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
      externalModules: [],
      forceDockerBundling: false,
      ...props.bundling,
    },
  });
  for (const queue of p.served)
    fn.addEventSource(
      new SqsEventSource(queue, {
        batchSize: s.lambda.batchSize,
        maxBatchingWindow: s.lambda.maxBatchingWindowSeconds > 0 ? Duration.seconds(s.lambda.maxBatchingWindowSeconds) : undefined,
        maxConcurrency: s.lambda.maxConcurrency,
        reportBatchItemFailures: true,
      }),
    );
  return { function: fn, service: undefined, memcachedEndpoint: '', memcachedSecurityGroup: undefined, dlqArchive: undefined };
}
