import { z } from 'zod';
import { jobTableSchema as tableSchema } from '../config/env.js';
import type { JobStore } from '../ports/job-store.js';

export function isJobStore(v: unknown): v is JobStore {
  return (
    typeof v === 'object' && v !== null && typeof (v as JobStore).transition === 'function' && typeof (v as JobStore).get === 'function'
  );
}

/**
 * Where job status goes: `{ table, endpoint?, region?, ttlDays? }` for DynamoDB, or your own
 * JobStore. Default: the table named by SQS_JOBS_JOB_TABLE, else no job store (nothing tracked).
 */
export const storeOptionSchema = z
  .union(
    [
      z
        .object({
          table: tableSchema,
          endpoint: z.string().optional(),
          region: z.string().optional(),
          ttlDays: z.number().int().min(1, 'must be 1-365').max(365, 'must be 1-365').default(14),
        })
        .strict(),
      z.custom<JobStore>(isJobStore, 'must implement JobStore'),
    ],
    { error: 'must be { table, endpoint?, region?, ttlDays? } or a JobStore' },
  )
  .optional();

export type StoreOption = z.input<typeof storeOptionSchema>;
