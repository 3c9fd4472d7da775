import { createHash } from 'node:crypto';
import type { AnyBatchJob } from '../../core/batch-job.js';
import { isFifoQueue } from '../../core/queue-url.js';
import { slotKept } from '../../core/rate-limit.js';
import { sleep } from '../../core/sleep.js';
import type { TurnNeeds } from '../context.js';

/*
 * A batch handler call's turn: the same rules as one job's (turn.ts), asked once per call. Its
 * key's lock when the job is exclusive, a permit of each capped tenant among its items, then its
 * rate slot. Items that cannot run now go back to fill (batches.ts keeps them: a batch waits where
 * it fills, holding no handler slot), tried again from a given time.
 */

/** What the turn needs to know of an item: its tenant, and its queue. */
export interface TenantItem {
  readonly queueUrl: string;
  readonly read: { readonly envelope: { readonly tenant?: string | undefined } };
}

/** The call's batch as its turn sees it. */
interface TurnBatch<T> {
  readonly job: AnyBatchJob;
  readonly key: string;
  readonly items: readonly T[];
  /** The rate slot it reserved when last tried (its turn was far off). */
  readonly rateSlotAt?: number;
}

/** Items back to fill, tried again from `retryAt` (with the rate slot they reserved; `behind`: after the rest of their batch). */
export interface Later<T> {
  readonly items: T[];
  readonly retryAt: number;
  readonly rateSlotAt?: number;
  readonly behind?: boolean;
}

/** The call may run `run` now, under permits given back by `release`; `capped` items wait (their tenant at its cap). */
interface BatchGo<T> {
  readonly run: readonly T[];
  readonly capped?: Later<T>;
  /** Give every permit back (an abandoned handler may still run: its permits then end with their TTL). */
  release(abandoned: boolean): Promise<void>;
}

/** How soon a batch held back (its key flushed elsewhere, a tenant of it at its cap) is tried again. */
const RETRY_MS = 100;

/** The longest a call waits for its rate slot, holding its handler slot; a turn further off is asked for again then. */
const MAX_FLUSH_WAIT_MS = 30_000;

/**
 * The call's turn: go (some or all items run now) or back to fill (the whole batch: its key is
 * flushed elsewhere now, or its rate's turn is far off; its permits given back). A wait for a near
 * rate slot happens here, the handler slot taken (ended early by `signal`).
 */
export async function batchTurn<T extends TenantItem>(
  ctx: TurnNeeds,
  batch: TurnBatch<T>,
  token: string,
  signal: AbortSignal,
): Promise<BatchGo<T> | { readonly back: Later<T> }> {
  const all = [...batch.items];
  const permits = await takeFlushPermits(ctx, batch, token);
  if (permits === 'busy') return { back: { items: all, retryAt: Date.now() + RETRY_MS } };
  const capped = new Set(permits.capped);
  const run = capped.size === 0 ? all : all.filter((i) => !capped.has(i));
  const waiting = capped.size === 0 ? undefined : { items: [...capped], retryAt: Date.now() + RETRY_MS, behind: true };
  if (run.length === 0) return { back: waiting! };
  let rate: 'now' | Omit<Later<T>, 'items'>;
  try {
    rate = await rateTurn(ctx, batch, signal);
  } catch (error) {
    await permits.release(false);
    throw error;
  }
  if (rate !== 'now') {
    await permits.release(false);
    return { back: { items: all, ...rate } };
  }
  return { run, ...(waiting === undefined ? {} : { capped: waiting }), release: permits.release };
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
interface FlushPermits<T extends TenantItem> {
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
async function takeFlushPermits<T extends TenantItem>(
  ctx: TurnNeeds,
  batch: TurnBatch<T>,
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
    if (permit === 'unavailable') ctx.report.log.warn({ job: job.name, key }, 'flushing without the key lock: memcached unavailable');
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

/**
 * A batch job with a rateLimit takes one slot per handler call and waits here for it, its items
 * held and its handler slot taken (the wait ends early when `signal` fires): 'now' to call the
 * handler; later when its turn is further off than MAX_FLUSH_WAIT_MS (the batch goes back to fill
 * with its slot, and is flushed on it). memcached unreachable: no limit.
 */
async function rateTurn(ctx: TurnNeeds, batch: TurnBatch<unknown>, signal: AbortSignal): Promise<'now' | Omit<Later<never>, 'items'>> {
  const limit = batch.job.rateLimit;
  if (limit === undefined || ctx.rates === undefined) return 'now';
  // The slot it reserved when last tried, unless too late for it now.
  const kept = batch.rateSlotAt;
  const slot =
    kept !== undefined && slotKept(kept, Date.now())
      ? { at: kept, reserved: true }
      : await ctx.rates.reserve(batch.job.name, limit, Date.now());
  if (slot === 'unavailable') return 'now';
  const wait = slot.at - Date.now();
  if (!slot.reserved) return { retryAt: slot.at };
  // Too far off to wait for holding a handler slot: back to fill, keeping the slot, until shortly before it.
  if (wait > MAX_FLUSH_WAIT_MS) return { retryAt: slot.at - MAX_FLUSH_WAIT_MS, rateSlotAt: slot.at };
  if (wait > 0) await sleep(wait, signal);
  return 'now';
}
