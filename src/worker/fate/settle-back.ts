import type { FateNeeds } from '../context.js';
import { resentMessage, atReceiveLimit } from '../decide/resend.js';
import type { Lease } from '../hold/lease.js';
import type { Acts } from './acts.js';
import type { Report } from './report.js';

/*
 * Settle's ways back to the queue (part of settle: fate/settle.ts decides which; only these two
 * files act on a message): let go of the hold, then make the message visible again, or re-send a
 * copy of it (at its receive limit, or a job that did not run on this receive) and delete it.
 */

/**
 * Stop holding the message and let an extension in flight land, so nothing the heartbeat sends can
 * undo the act that follows. False: the lease was lost meanwhile (another consumer may hold it).
 */
export async function letGo(ctx: FateNeeds, lease: Lease): Promise<boolean> {
  await ctx.heartbeat.stopHolding(lease);
  return !lease.lost;
}

/**
 * Make a message visible again after `seconds`, or, when that would let SQS's redrive move it to
 * the DLQ on its next receive, re-send it (same body and job id, fresh receive count) and delete it.
 * A message already in the DLQ (`deadLettered`) goes back marked so, to be counted and never run.
 */
export async function handBack(
  ctx: FateNeeds,
  acts: Acts,
  lease: Lease,
  report: Report,
  seconds: number,
  reason: string,
  carry: Carried = {},
) {
  const m = lease.message;
  if (atReceiveLimit(m, ctx.queueOf(m.queueUrl).maxReceiveCount)) {
    const copy = resentMessage(m, seconds, carry);
    const refusal = await acts.resends.resend(m, copy);
    if (refusal !== undefined) {
      report.resendFailed(new Error(`could not re-send message ${m.messageId} to ${m.queueUrl}: ${refusal}`), reason);
      await makeVisible(acts, lease, report, seconds);
      return;
    }
    report.resent(reason, copy.delaySeconds ?? 0);
    await acts.deletes.delete(m, false); // its copy is queued: not drained
    return;
  }
  await makeVisible(acts, lease, report, seconds);
}

type Reasoned = { readonly delaySeconds: number; readonly reason: string };
type Carried = NonNullable<Parameters<typeof resentMessage>[2]>;
/** Re-send a message whose job did not run on this receive, the receive not counted, in SendMessageBatch calls (`sent`: told the copy's delay). */
export async function resendUncounted(
  ctx: FateNeeds,
  acts: Acts,
  lease: Lease,
  report: Report,
  o: Carried & Reasoned,
  sent: (delay: number) => void,
) {
  const m = lease.message;
  const copy = resentMessage(m, o.delaySeconds, { ...o, countThisReceive: false });
  const refusal = await acts.resends.resend(m, copy);
  if (refusal !== undefined) {
    ctx.report.onError('defer', new Error(`could not re-send message ${m.messageId} to ${m.queueUrl}: ${refusal}; it is handed back`));
    return handBack(ctx, acts, lease, report, o.delaySeconds, o.reason, o);
  }
  sent(copy.delaySeconds ?? 0);
  await acts.deletes.delete(m, false); // its copy is queued: not drained
}

async function makeVisible(acts: Acts, lease: Lease, report: Report, seconds: number): Promise<void> {
  // Coalesced with other hand-backs into ChangeMessageVisibilityBatch calls.
  const refusal = await acts.visibility.change(lease.message, seconds);
  if (refusal !== undefined) report.visibilityUnchanged(refusal);
}
