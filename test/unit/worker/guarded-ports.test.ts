import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob } from '../../../src/core/job.js';
import type { JobLock } from '../../../src/ports/lock.js';
import type { Permits } from '../../../src/ports/permits.js';
import { MemoryLock } from '../../../src/testing/memory-lock.js';
import { MemoryPermits } from '../../../src/testing/memory-permits.js';
import { guardedLock, guardedPermits } from '../../../src/worker/guarded-ports.js';
import { readOnce } from '../../../src/worker/run/read.js';
import { inMemoryWorker, runToEnd } from '../../helpers/worker-context.js';

/** A lock whose claim breaks its contract by throwing: at once (`sync`) or as a rejection. */
function throwingLock(sync: boolean): JobLock {
  const lock = new MemoryLock();
  return Object.assign(lock, {
    claim: sync
      ? () => {
          throw new Error('bug in a custom lock');
        }
      : async () => {
          throw new Error('bug in a custom lock');
        },
  });
}

function throwingPermits(): Permits {
  return Object.assign(new MemoryPermits(), {
    take: async () => {
      throw new Error('bug in custom permits');
    },
  });
}

describe('guarded ports: a claim or a take that throws reads as unavailable, never as taken', () => {
  it.each([true, false])('lock.claim throwing (at once: %s) answers unavailable; the other calls pass through', async (sync) => {
    const inner = throwingLock(sync);
    const calls: string[] = [];
    const release = inner.release.bind(inner);
    inner.release = async (jobId, token) => {
      calls.push(`release ${jobId} ${token}`);
      return release(jobId, token);
    };
    const lock = guardedLock(inner);
    expect(await lock.claim('j', 't', 60)).toBe('unavailable');
    expect(await lock.release('j', 't')).toBe(await release('j', 't')); // the inner lock's own answer
    expect(calls).toEqual(['release j t']);
  });

  it('lock.holder throwing answers unknown (undefined); a lock without holder gets none', async () => {
    const inner = Object.assign(new MemoryLock(), {
      holder: async (): Promise<string | undefined> => {
        throw new Error('bug in a custom lock');
      },
    });
    expect(await guardedLock(inner).holder!('j')).toBeUndefined();
    const plain: JobLock = { ...new MemoryLock(), claim: async () => 'claimed' } as unknown as JobLock;
    expect(guardedLock(plain).holder).toBeUndefined();
  });

  it('permits.take throwing answers unavailable; extend and release pass through, rejections included', async () => {
    const inner = throwingPermits();
    const permits = guardedPermits(inner);
    expect(await permits.take('acme', 1, 't', 60)).toBe('unavailable');
    const broken = guardedPermits(
      Object.assign(new MemoryPermits(), {
        release: async () => {
          throw new Error('release failed');
        },
      }),
    );
    await expect(broken.release('acme', 0, 't')).rejects.toThrow('release failed');
  });

  it('a worker with such ports runs the job without the lock or the cap, and says the lock was unavailable', async () => {
    const job = defineJob({ name: 'step', args: z.object({ n: z.number() }), handle: ({ n }) => n + 1 });
    const w = await inMemoryWorker([job], {
      options: { lock: throwingLock(true), permits: throwingPermits(), tenantCaps: { acme: 1 } },
    });
    try {
      await w.send('step', { n: 1 }, { tenant: 'acme' });
      const lease = await w.receive();
      const { outcome } = await runToEnd(w.ctx, lease, readOnce(w.ctx.config.jobs, lease));
      expect(outcome).toMatchObject({ kind: 'succeeded', result: 2 });
      expect(lease.lock).toBeUndefined();
      expect(lease.permit).toBeUndefined();
      expect(w.events).toEqual(['job:lock-unavailable', 'job:start']);
    } finally {
      await w.close();
    }
  });
});
