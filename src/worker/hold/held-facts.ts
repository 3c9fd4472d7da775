import { unfinishedRunsOf } from '../../core/delivery.js';
import type { HeldFacts } from '../decide/decide.js';
import type { WorkerContext } from '../context.js';
import type { Lease } from './lease.js';

/** What decide needs to know of a held message beyond its run (decide.ts's cutShort). */
export function heldFactsOf(ctx: Pick<WorkerContext, 'config' | 'queueOf'>, lease: Lease): HeldFacts {
  const m = lease.message;
  const q = ctx.queueOf(m.queueUrl);
  return {
    fifo: q.fifo,
    receiveCount: m.receiveCount + lease.retries,
    maxReceiveCount: q.maxReceiveCount,
    unfinished: unfinishedRunsOf(m),
    claimToken: lease.lock?.token,
    lockTtlSeconds: ctx.config.lockTtlSeconds,
  };
}
