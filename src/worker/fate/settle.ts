import { deadLetterMessage } from '../../core/dead-letter.js';
import { toError } from '../../core/errors.js';
import type { JobInfo } from '../../core/job-events.js';
import type { FateNeeds } from '../context.js';
import type { Acts } from './acts.js';
import type { Lease } from '../hold/lease.js';
import { visibilitySeconds } from '../decide/backoff.js';
import { cutShort, handedBackNow, onceLost, type Outcome } from '../decide/decide.js';
import { heldFactsOf } from '../hold/held-facts.js';
import { type Fallback, ifFails } from './fallback.js';
import { recordEnd } from './record-end.js';
import { Report } from './report.js';
import { atReceiveLimit } from '../decide/resend.js';
import { handBack, letGo, resendUncounted } from './settle-back.js';
import { originOf } from '../../core/delivery.js';

/*
 * The one place where a received message ends: with settle-back.ts (its ways back to the queue),
 * the only code that deletes, hands back, re-sends or dead-letters one
 * (test/unit/worker/fate-home.test.ts fails on another caller; the heartbeat's extensions excepted). Every Outcome maps to exactly one of: delete (success, duplicate), hand
 * back (visible again after a delay; re-sent when it has no receive left, or, the receive not
 * counted, when the job did not run on it), defer (re-sent, the receive not counted), dead-letter
 * (send to the DLQ, then delete), or left alone (lease lost). A cancelled job is deleted like a
 * success, and recorded as cancelled.
 *
 * The message stays held (its visibility extended) until settle acts on it: a job store slower than
 * the visibility timeout must not let it come back and spend receives while its end is recorded.
 * Only the dedupe lock and the tenant's permit stop being extended at once.
 */

/** End a message as `outcome` says. Never leaves it tracked by the heartbeat. */
export async function settle(
  ctx: FateNeeds,
  acts: Acts,
  lease: Lease,
  info: JobInfo,
  outcome: Outcome,
  permitFreed: (tenant: string) => void = () => {},
): Promise<void> {
  try {
    await carryOut(ctx, acts, lease, info, outcome, permitFreed);
  } finally {
    // carryOut lets go of the message before it acts; this is for one that threw before it could.
    await ctx.heartbeat.stopHolding(lease);
  }
}

/** `permitFreed`: told as soon as the tenant's permit is given back, before the message's own calls, so a job waiting for it starts at once. */
async function carryOut(
  ctx: FateNeeds,
  acts: Acts,
  lease: Lease,
  info: JobInfo,
  decided: Outcome,
  permitFreed: (tenant: string) => void,
): Promise<void> {
  const { lock, permit } = lease.endClaims();
  if (lease.pending !== undefined) await lease.pending;
  // The heartbeat may have found the lease lost meanwhile: then act only where it is safe.
  const outcome = lease.lost ? onceLost(decided) : decided;
  const m = lease.message;
  const report = new Report(ctx.report, info);
  const abandoned = 'abandoned' in outcome && outcome.abandoned;
  // An abandoned handler may still be running: its lock and its tenant's permit are kept until their TTL.
  const unlock = async (keep = abandoned) => {
    if (lock !== undefined && !keep) await ctx.lock.release(lock.jobId, lock.token);
  };
  if (permit !== undefined && !abandoned) {
    // Permits should not throw; one that does must not keep the message from ending (the permit then lapses at its TTL).
    await ctx.permits
      ?.release(permit.key, permit.index, permit.token)
      .catch((error: unknown) => ctx.report.onError('permit release', error));
    permitFreed(permit.key);
  }
  /** Hand back, unless the lease was lost while the message was held (then it is someone else's). */
  const giveBack = async (f: Fallback) => {
    if (await letGo(ctx, lease)) await handBack(ctx, acts, lease, report, f.seconds, f.reason, f);
  };
  /** Delete: even after a lost lease (a stale handle fails harmlessly, and the copy ends as a duplicate). */
  const remove = async () => {
    await letGo(ctx, lease);
    await acts.deletes.delete(m);
  };
  const vt = ctx.config.visibilityTimeoutSeconds;

  switch (outcome.kind) {
    case 'succeeded': {
      // The done mark need not come before the delete: until it lands, a copy reads "running", never a job to run.
      const marked =
        lock &&
        ctx.lock.complete(lock.jobId, lock.token, ctx.config.completedTtlSeconds).catch((e) => ctx.report.onError('lock complete', e));
      report.succeeded(outcome.waitMs, outcome.processMs);
      if (await recordEnd(ctx, lease, info, { kind: 'succeeded', result: outcome.result })) await remove();
      else await giveBack(ifFails('count', vt));
      await marked;
      return;
    }
    case 'duplicate': {
      report.duplicate(outcome.state);
      // A fan-out child that ended before: counted again (once per child id), in case its count was lost.
      const ended = outcome.state !== 'running';
      if (!ended || (await recordEnd(ctx, lease, info, { kind: 'duplicate', succeeded: outcome.state === 'completed' }))) await remove();
      // A leftover of a job in the DLQ keeps that mark if it must be re-sent (its last receive): the
      // copy is counted, never run (its job id is free: a plain copy would run the job again).
      else await giveBack(ifFails(outcome.state === 'dead-lettered' ? 'count after dead-letter' : 'count', vt));
      return;
    }
    case 'retry': {
      await unlock();
      await recordEnd(ctx, lease, info, { kind: 'retry', error: outcome.error, delayMs: outcome.delayMs });
      const seconds = visibilitySeconds(outcome.delayMs, Date.now() - lease.receivedAt);
      report.failed(outcome.error, outcome.processMs, seconds * 1000);
      await giveBack({ seconds, reason: 'retry', deadLettered: false });
      return;
    }
    case 'hand-back': {
      await unlock();
      report.handedBack(outcome.reason);
      if (!outcome.notAnAttempt) await giveBack({ seconds: outcome.delaySeconds, reason: outcome.reason, deadLettered: false });
      else if (await letGo(ctx, lease))
        await resendUncounted(ctx, acts, lease, report, outcome, (d) => report.resentUnfinished(outcome.unfinishedRuns?.runs, d));
      return;
    }
    case 'cancelled': {
      // Its lock holds the cancel mark now (or was never taken): nothing to release or complete.
      report.cancelled(outcome.reason);
      if (await recordEnd(ctx, lease, info, { kind: 'cancelled', reason: outcome.reason })) await remove();
      else await giveBack(ifFails('count', vt));
      return;
    }
    case 'lost': {
      await letGo(ctx, lease);
      await unlock();
      return;
    }
    case 'wait': // not kept waiting after all (stopping, or lost): back to the queue now
      await unlock();
      report.handedBack(outcome.reason);
      await giveBack({ seconds: 0, reason: outcome.reason, deadLettered: false });
      return;
    case 'defer': {
      await unlock();
      const deferred = (delay: number) => report.deferred(outcome.reason, delay, outcome.limit);
      if (await letGo(ctx, lease)) await resendUncounted(ctx, acts, lease, report, outcome, deferred);
      return;
    }
    case 'dead-letter': {
      if (outcome.error !== undefined) report.failed(outcome.error, outcome.processMs ?? 0, undefined);
      const dlq = ctx.queueOf(m.queueUrl).deadLetterQueueUrl;
      // Free the job id for every other message before the DLQ send: a replay's copy, sent once the
      // DLQ holds the job, must run (were it deleted as redundant, with this message deleted too, the
      // job would be lost). Kept against this message until it is marked dead-lettered, so a copy of
      // it delivered meanwhile is handed back, not run again (JobLock.leave; without it, released).
      if (lock !== undefined && !(await ctx.lock.leave?.(lock.jobId, lock.token, ctx.config.lockTtlSeconds))) await unlock(false);
      try {
        const e = lease.reading?.envelope;
        const event = e?.event === undefined ? undefined : { job: e.job, jobId: e.id };
        await acts.deadLetter(dlq, deadLetterMessage(m, outcome.reason, outcome.detail, new Date(), event));
      } catch (error) {
        // Not moved: hand it back to come again (re-sent at its last receive: SQS's redrive must not take it without the reason).
        await unlock(false);
        report.deadLetterFailed(toError(error), outcome.reason, dlq);
        await giveBack(ifFails('dead-letter send', vt));
        return;
      }
      // In the DLQ: remember the message by origin (a copy re-sent from it too), as long as a done
      // mark: should it come back (a failed delete, a slow store), it is a leftover, not run again.
      // Marked only after the send (a mark for a failed send would delete the job's carrier). Not
      // marked: the leaving claim is kept until the lock's TTL, so a copy meanwhile is handed back.
      if (await ctx.lock.markDeadLettered(originOf(m), ctx.config.completedTtlSeconds)) await unlock(false);
      report.deadLettered(outcome.reason, outcome.detail);
      // A count that failed: it comes back within the marker's life and is deleted as a leftover,
      // and counted then (on its last receive it is re-sent marked as dead-lettered instead).
      if (await recordEnd(ctx, lease, info, { kind: 'dead-letter', reason: outcome.reason, detail: outcome.detail })) await remove();
      else await giveBack(ifFails('count after dead-letter', vt));
      return;
    }
  }
}

/**
 * Hand back messages that were never started (shutdown, received while stopping, a blocked FIFO
 * group): visible at once, in batches of 10 per queue; one with no receive left is settled on its
 * own, and re-sent. `uncounted` (a Lambda invocation's deadline): on a standard queue each is
 * re-sent instead, this receive not counted (decide.ts's cutShort).
 */
export async function handBackUnstarted(
  ctx: FateNeeds,
  acts: Acts,
  leases: readonly Lease[],
  reason: string,
  describe: (lease: Lease) => JobInfo,
  uncounted = false,
): Promise<void> {
  await Promise.all(leases.map((lease) => ctx.heartbeat.stopHolding(lease)));
  const held = leases.filter((l) => !l.lost);
  const resent = uncounted ? held.filter((l) => !ctx.queueOf(l.message.queueUrl).fifo) : [];
  const last = held.filter((l) => !resent.includes(l) && atReceiveLimit(l.message, ctx.queueOf(l.message.queueUrl).maxReceiveCount));
  const rest = held.filter((l) => !resent.includes(l) && !last.includes(l));
  const calls: Promise<void>[] = [
    ...resent.map((lease) =>
      settle(ctx, acts, lease, describe(lease), cutShort(reason, heldFactsOf(ctx, lease), { ran: false, abandoned: false })),
    ),
    ...last.map((lease) => settle(ctx, acts, lease, describe(lease), handedBackNow(reason))),
  ];
  for (const answer of acts.visibility.changeNow(
    rest.map((l) => l.message),
    0,
  ))
    calls.push(
      answer.then((refusal) => {
        if (refusal !== undefined) ctx.report.onError('hand back', new Error(`could not hand a message back: ${refusal}`));
      }),
    );
  await Promise.all(calls);
  if (leases.length > 0) ctx.report.log.info({ handedBack: leases.length, resent: last.length, reason }, 'handed back unstarted messages');
}
