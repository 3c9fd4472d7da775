import type { z } from 'zod';
import { createDynamoJobStore } from '../adapters/dynamodb-store.js';
import { MemcachedLock } from '../adapters/memcached-lock.js';
import type { JobLock } from '../ports/lock.js';
import { type Env, jobTableSchema as tableSchema, type MemcachedSettings, parseConfig, resolveDynamoSettings } from '../config/env.js';
import type { JobStore } from '../ports/job-store.js';
import { isJobStore, type storeOptionSchema } from './store.js';

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

/** The lock a cancel marks: MemcachedLock on the workers' memcached (over TLS as its settings say), under their key prefix. */
export function memcachedLock(settings: MemcachedSettings, keyPrefix: string): JobLock {
  return new MemcachedLock({ ...settings, keyPrefix });
}
