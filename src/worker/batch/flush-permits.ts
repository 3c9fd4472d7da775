import { createHash } from 'node:crypto';
import type { AnyBatchJob } from '../../core/batch-job.js';
import { isFifoQueue } from '../../core/queue-url.js';
import type { WorkerContext } from '../context.js';
import type { Batch, Held } from './batches.js';

/** What the permits need to know of an item: its tenant, and its queue. */
export interface TenantItem extends Held {
  readonly read: { readonly envelope: { readonly tenant?: string | undefined } };
}

/**
 * The memcached key part that names a batch key: the key itself when it is short printable ASCII,
 * else its hash (a key function may return anything; memcached keys may not hold spaces or be long).
 */
export function exclusiveKey(job: AnyBatchJob, key: string): string {
  const safe = /^[\x21-\x7e]{1,100}$/.test(key) ? key : createHash('sha256').update(key).digest('hex').slice(0, 32);
  return `batch/${job.name}/${safe}`;
}

/** The fleet-wide permits one handler call holds, and the items it may not run now. */
export interface FlushPermits<T extends TenantItem> {
  /** Items whose tenant is at its cap: they wait for a later call. */
  readonly capped: readonly T[];
  /** Give every permit back (an abandoned handler may still run: its permits then end with their TTL). */
  release(abandoned: boolean): Promise<void>;
}

/**
 * Take the permits a batch's handler call runs under: its key's when the job is exclusive ('busy'
 * when another worker flushes that key now), and one of each capped tenant's among its items (a
 * call counts as one running job of each tenant it holds items of, whatever how many). A tenant at
 * its cap keeps its items out of this call: `capped`. memcached unreachable: no key lock (logged)
 * and no caps, as for ordinary jobs. Held permits are extended while the call runs.
 */
export async function takeFlushPermits<T extends TenantItem>(
  ctx: WorkerContext,
  batch: Batch<T>,
  token: string,
): Promise<FlushPermits<T> | 'busy'> {
  const { job, key, items } = batch;
  const permits = ctx.permits;
  if (permits === undefined) return { capped: [], release: async () => {} };
  const ttl = ctx.config.lockTtlSeconds;
  const held: { key: string; index: number }[] = [];
  const giveBack = () => Promise.all(held.map((p) => permits.release(p.key, p.index, token).catch(() => {})));
  if (job.exclusive) {
    const lock = exclusiveKey(job, key);
    const permit = await permits.take(lock, 1, token, ttl);
    if (permit === 'full') return 'busy';
    if (permit === 'unavailable') ctx.log.warn({ job: job.name, key }, 'flushing without the key lock: memcached unavailable');
    else held.push({ key: lock, index: permit });
  }
  const caps = ctx.config.tenantCaps;
  const tenants = new Set<string>();
  for (const item of items) {
    const tenant = item.read.envelope.tenant;
    // As for ordinary jobs: own properties only, and no caps on FIFO queues (a group waits in order).
    if (tenant !== undefined && Object.hasOwn(caps, tenant) && !isFifoQueue(item.queueUrl)) tenants.add(tenant);
  }
  const full = new Set<string>();
  await Promise.all(
    [...tenants].map(async (tenant) => {
      const permit = await permits.take(tenant, caps[tenant]!, token, ttl).catch(() => 'unavailable' as const);
      if (permit === 'full') full.add(tenant);
      else if (typeof permit === 'number') held.push({ key: tenant, index: permit });
    }),
  );
  const capped = full.size === 0 ? [] : items.filter((i) => full.has(i.read.envelope.tenant!));
  // Every item waits: nothing runs, so nothing is held.
  if (capped.length === items.length) {
    await giveBack();
    return { capped, release: async () => {} };
  }
  // A lapse only shortens a permit.
  const extend = () => Promise.all(held.map((p) => permits.extend(p.key, p.index, token, ttl).catch(() => {})));
  const renew = held.length === 0 ? undefined : setInterval(extend, (ttl * 1000) / 3);
  renew?.unref();
  return {
    capped,
    release: async (abandoned) => {
      if (renew !== undefined) clearInterval(renew);
      if (!abandoned) await giveBack();
    },
  };
}
