import { defineConfig } from 'vitest/config';

// The fault and load suite: real processes, ElasticMQ and memcached on loopback, one file at a time.
export default defineConfig({
  test: {
    name: 'faults',
    include: ['test/faults/**/*.test.ts'],
    globalSetup: ['test/faults/global-setup.ts'],
    fileParallelism: false,
    testTimeout: 2_400_000,
    hookTimeout: 60_000,
    env: { AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  },
});
