import { defineConfig } from 'vitest/config';

const elasticmq = process.env.SQS_JOBS_ELASTICMQ_URL ?? `http://127.0.0.1:${process.env.SQS_JOBS_ELASTICMQ_PORT ?? 9324}`;

// The fault and load suite: real processes, ElasticMQ and memcached on loopback, one file at a time.
// Beside it, the queue port's contract on ElasticMQ: unlike LocalStack and moto it refuses a stale
// receipt handle, as AWS does, so the lost-lease classification is really exercised there.
export default defineConfig({
  test: {
    fileParallelism: false,
    hookTimeout: 60_000,
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    projects: [
      {
        extends: true,
        test: {
          name: 'faults',
          include: ['test/faults/**/*.test.ts'],
          globalSetup: ['test/faults/global-setup.ts'],
          testTimeout: 2_400_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'contracts:elasticmq',
          include: ['test/contracts/queue-port.test.ts'],
          testTimeout: 60_000,
          env: {
            SQS_JOBS_TEST_STACK: 'elasticmq',
            AWS_ENDPOINT_URL: elasticmq,
            AWS_REGION: 'us-east-1',
            AWS_ACCESS_KEY_ID: 'test',
            AWS_SECRET_ACCESS_KEY: 'test',
          },
        },
      },
    ],
  },
});
