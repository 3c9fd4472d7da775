import { z } from 'zod';
import { createDynamoJobStore } from '../adapters/dynamodb-store.js';
import { type Env, jobTableSchema as tableSchema, parseConfig, resolveDynamoSettings } from '../config/env.js';
import type { JobStore } from '../ports/job-store.js';

function isJobStore(v: unknown): v is JobStore {
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

/** The job store a producer, worker or getJob() uses, or undefined when none is configured. */
export function resolveJobStore(option: z.output<typeof storeOptionSchema>, env: Env = process.env): JobStore | undefined {
  if (isJobStore(option)) return option;
  const settings = option ?? (env.SQS_JOBS_JOB_TABLE ? { table: env.SQS_JOBS_JOB_TABLE, ttlDays: 14 } : undefined);
  if (settings === undefined) return undefined;
  parseConfig(tableSchema, settings.table, option === undefined ? 'SQS_JOBS_JOB_TABLE' : 'options.store.table', 'invalid job store table');
  const aws = resolveDynamoSettings({ endpoint: settings.endpoint, region: settings.region }, env, {
    endpoint: 'options.store.endpoint',
    region: 'options.store.region',
  });
  return createDynamoJobStore(aws, settings.table, settings.ttlDays * 86_400, env);
}
