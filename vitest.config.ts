import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';

/**
 * The integration suite runs once per local SQS server, as its own project: `integration:localstack`
 * and `integration:moto` (started by infra/local/stack.sh, on the ports it uses). SQS_JOBS_TEST_STACKS
 * narrows the list (`npm test` drops LocalStack where no Python >= 3.13 exists to run it).
 */
const port = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const stacks = {
  localstack: `http://127.0.0.1:${port('SQS_JOBS_LOCALSTACK_PORT', 4566)}`,
  moto: `http://127.0.0.1:${port('SQS_JOBS_MOTO_PORT', 4567)}`,
} as const;
type Stack = keyof typeof stacks;
const chosen = (process.env.SQS_JOBS_TEST_STACKS ?? 'localstack moto').split(/[\s,]+/).filter((s): s is Stack => s in stacks);
const dynamodb = `http://127.0.0.1:${port('SQS_JOBS_DYNAMODB_PORT', 4569)}`;
const memcached = process.env.SQS_JOBS_MEMCACHED ?? `127.0.0.1:${port('SQS_JOBS_MEMCACHED_PORT', 11211)}`;

/**
 * The files moto runs as a second opinion: those whose outcome turns on what the SQS, CloudWatch or
 * SNS server answers, where moto's answers differ from LocalStack's (no StartMessageMoveTask, so the
 * client-side replay; MessageSystemAttributes dropped from SendMessageBatch; its own queue URL form,
 * ListMetrics rows, SNS subscriptions; whole-second visibility; its S3, for the DLQ archive), and
 * the worker's core loop. The rest (memcached's and DynamoDB's ports, the HTTP API, the dashboard,
 * the CLI's own rules, the package, the examples) talk to the same memcached and DynamoDB Local
 * whatever the SQS server, so LocalStack's run is their evidence. CONTRIBUTING.md says which run where.
 */
const MOTO_FILES = [
  'test/contracts/queue-port.test.ts',
  'test/contracts/queue-admin-port.test.ts',
  'test/integration/queues.test.ts',
  'test/integration/queue-url-forms.test.ts',
  'test/integration/metrics.test.ts',
  'test/integration/metrics-endpoint.test.ts',
  'test/integration/events.test.ts',
  'test/integration/dlq-replay.test.ts',
  'test/integration/dlq-archive.test.ts',
  'test/integration/ops.test.ts',
  'test/integration/fairness.test.ts',
  'test/integration/tracing-paths.test.ts',
  'test/integration/worker.test.ts',
  'test/integration/fifo.test.ts',
  'test/integration/dead-letter-window.test.ts',
  'test/integration/shutdown.test.ts',
  'test/integration/stack-down.test.ts',
  'test/integration/lambda-mapping.test.ts',
  'test/integration/lambda-handler.test.ts',
];

const integration = (stack: Stack): TestProjectInlineConfiguration => ({
  extends: true,
  test: {
    name: `integration:${stack}`,
    include: stack === 'moto' ? MOTO_FILES : ['test/integration/**/*.test.ts', 'test/contracts/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    // One more try for a test that fails: these wait on real servers sharing two cores with the
    // suite, and an answer that comes too late once in a few hundred tests is the machine, not the
    // code. A second failure fails the run; a pass on the second try is named in npm test's summary.
    retry: 1,
    env: {
      SQS_JOBS_TEST_STACK: stack,
      AWS_ENDPOINT_URL: stacks[stack],
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'test',
      AWS_SECRET_ACCESS_KEY: 'test',
      SQS_JOBS_MEMCACHED: memcached,
      // The job store's DynamoDB, for both projects: DynamoDB Local (infra/local/dynamodb.sh).
      AWS_ENDPOINT_URL_DYNAMODB: dynamodb,
    },
  },
});

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 30_000,
    // Integration files each use their own queues; two at a time suits a 2-core machine.
    maxWorkers: 2,
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/unit/**/*.test.ts'] } },
      ...chosen.map(integration),
      // The CDK construct (sqs-jobs/cdk), synthesised offline and its templates asserted: no AWS, no network.
      { extends: true, test: { name: 'cdk', include: ['test/cdk/**/*.test.ts'] } },
    ],
  },
});
