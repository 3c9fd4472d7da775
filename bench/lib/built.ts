/**
 * The built package (dist/, what users run; the bench scripts build it first). src/ through tsx
 * would wrap every closure (keepNames) and cost CPU and heap per message that users never pay.
 * Types come from src/, which dist/ is built from. BENCH_DIST: another tree's dist/ (a baseline
 * build, BENCH_BASELINE in run.ts), whose public API must have what the contenders use.
 */
const dist = process.env.BENCH_DIST ?? new URL('../../dist', import.meta.url).pathname;
export const built = (await import(`${dist}/src/index.js`)) as typeof import('../../src/index.js');
export const { EmfSink } = (await import(`${dist}/src/metrics/emf-sink.js`)) as typeof import('../../src/metrics/emf-sink.js');
export const { RECEIVE_ATTRIBUTES } = (await import(
  `${dist}/src/adapters/sqs-queue.js`
)) as typeof import('../../src/adapters/sqs-queue.js');
