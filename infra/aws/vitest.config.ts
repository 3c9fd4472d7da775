import { defineConfig } from 'vitest/config';

// Offline synthesis and template assertions: no credentials, no network.
export default defineConfig({
  test: { name: 'infra', include: ['test/**/*.test.ts'], testTimeout: 60_000 },
});
