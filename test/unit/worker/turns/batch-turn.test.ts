import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineBatchJob } from '../../../../src/core/batch-job.js';
import { MemoryRateLimits } from '../../../../src/testing/memory-rate-limits.js';
import { batchTurn, exclusiveKey, type TenantItem } from '../../../../src/worker/turns/batch-turn.js';
import { type InMemoryWorker, inMemoryWorker } from '../../../helpers/worker-context.js';

// A batch handler call's turn, on the in-memory permits and rate limits (the same ports the
// memcached ones pass the contract tests of): the key's lock, capped tenants' permits, the rate slot.

const job = (o: { exclusive?: boolean; perSecond?: number } = {}) =>
  defineBatchJob({
    name: 'sync',
    args: z.object({}),
    maxSize: 10,
    maxWaitMs: 0,
    ...(o.exclusive === undefined ? {} : { exclusive: o.exclusive }),
    ...(o.perSecond === undefined ? {} : { rateLimit: { perSecond: o.perSecond } }),
    handle: () => {},
  });

let w: InMemoryWorker | undefined;
afterEach(() => w?.close());

const item = (tenant?: string): TenantItem => ({ queueUrl: w!.url, read: { envelope: tenant === undefined ? {} : { tenant } } });
const live = new AbortController().signal;

describe('batchTurn: one question per handler call', () => {
  it('goes with every item and holds no permit when nothing limits the job', async () => {
    const j = job();
    w = await inMemoryWorker([j]);
    const items = [item(), item('acme')];
    const turn = await batchTurn(w.ctx, { job: j, key: 'k', items }, 'tok', live);
    expect('run' in turn && turn.run).toEqual(items);
    expect('run' in turn && turn.capped).toBeUndefined();
  });

  it("exclusive: back to fill, the whole batch, while another call holds the key's lock", async () => {
    const j = job({ exclusive: true });
    w = await inMemoryWorker([j]);
    expect(await w.permits.take(exclusiveKey(j, 'k'), 1, 'elsewhere', 30)).toBe(0);
    const items = [item(), item()];
    const turn = await batchTurn(w.ctx, { job: j, key: 'k', items }, 'tok', live);
    expect('back' in turn && turn.back.items).toEqual(items);
    expect('back' in turn && turn.back.retryAt).toBeGreaterThan(Date.now());
  });

  it("a capped tenant at its cap: the others go, its items wait behind; release gives the call's permits back", async () => {
    const j = job();
    w = await inMemoryWorker([j], { options: { tenantCaps: { acme: 1, zed: 1 } } });
    expect(await w.permits.take('acme', 1, 'elsewhere', 30)).toBe(0);
    const [a, z1, other] = [item('acme'), item('zed'), item()];
    const turn = await batchTurn(w.ctx, { job: j, key: 'k', items: [a!, z1!, other!] }, 'tok', live);
    if (!('run' in turn)) throw new Error('expected the call to go');
    expect(turn.run).toEqual([z1, other]);
    expect(turn.capped).toMatchObject({ items: [a], behind: true });
    expect(await w.permits.take('zed', 1, 'next', 30)).toBe('full'); // held by the call
    await turn.release(false);
    expect(await w.permits.take('zed', 1, 'next', 30)).toBe(0);
  });

  it('every item capped: back to fill, nothing held', async () => {
    const j = job();
    w = await inMemoryWorker([j], { options: { tenantCaps: { acme: 1 } } });
    await w.permits.take('acme', 1, 'elsewhere', 30);
    const turn = await batchTurn(w.ctx, { job: j, key: 'k', items: [item('acme')] }, 'tok', live);
    expect('back' in turn && turn.back.behind).toBe(true);
  });

  it('a rate slot far off: back to fill keeping the slot, and the permits it took given back', async () => {
    const j = job({ exclusive: true, perSecond: 0.01 }); // one call per 100 s
    const rates = new MemoryRateLimits();
    w = await inMemoryWorker([j], { options: { rateLimits: rates } });
    // Two calls elsewhere took the next slots: this one's is at least 100 s off.
    for (let i = 0; i < 2; i++) await rates.reserve('sync', j.rateLimit!, Date.now());
    const second = await batchTurn(w.ctx, { job: j, key: 'k', items: [item()] }, 'tok', live);
    if (!('back' in second)) throw new Error('expected the call to go back to fill');
    expect(second.back.rateSlotAt).toBeGreaterThan(Date.now() + 60_000);
    expect(second.back.retryAt).toBe(second.back.rateSlotAt! - 30_000);
    expect(await w.permits.take(exclusiveKey(j, 'k'), 1, 'next', 30)).toBe(0); // the key's lock given back
  });
});
