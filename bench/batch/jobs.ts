/**
 * The benchmark's two sqs-jobs jobs over one item shape: a batch job keyed by the item's key, and
 * a plain job that takes one item. The producer and the workers share these definitions.
 */
import { z } from 'zod';
import type { JobContext } from '../../src/index.js';
import { built } from '../lib/built.js';
import type { BatchJobSpec } from '../../src/core/batch-job.js';
import { seededRandom } from '../lib/sqs-proxy.js';

/** One item: its number within the run, and the downstream key it belongs to (e.g. an account). */
export const itemArgs = z.object({ seq: z.number().int().nonnegative(), key: z.string().min(1) });
export type ItemArgs = z.output<typeof itemArgs>;

export const BATCH_JOB = 'bench-batch';
export const SINGLE_JOB = 'bench-single';

type BatchHandle = BatchJobSpec<typeof itemArgs>['handle'];

export interface BatchSettings {
  readonly maxSize: number;
  readonly maxWaitMs: number;
  readonly handle: BatchHandle;
}

export function batchJob(s: BatchSettings) {
  return built.defineBatchJob({
    name: BATCH_JOB,
    args: itemArgs,
    key: (a) => a.key,
    maxSize: s.maxSize,
    maxWaitMs: s.maxWaitMs,
    handle: s.handle,
  });
}

export function singleJob(handle: (args: ItemArgs, ctx: JobContext) => Promise<void>) {
  return built.defineJob({ name: SINGLE_JOB, args: itemArgs, handle });
}

/** `n` items spread over `keys` keys uniformly at random (seeded: every contender gets the same list). */
export function makeItems(n: number, keys: number, seed = 42): ItemArgs[] {
  const random = seededRandom(seed);
  return Array.from({ length: n }, (_, seq) => ({ seq, key: keyName(Math.floor(random() * keys)) }));
}

export const keyName = (i: number) => `k${String(i).padStart(2, '0')}`;
