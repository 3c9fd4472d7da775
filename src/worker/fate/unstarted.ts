import type { JobInfo } from '../../job-events.js';
import { groupByQueue, inBatches } from '../../sqs-batch.js';
import type { Lease } from '../hold/lease.js';
import { atReceiveLimit } from './resend.js';
import type { SettleDeps } from './settle-deps.js';
import { settle } from './settle.js';

/**
 * Hand back messages that were never started (shutdown, received while stopping, a blocked FIFO
 * group): visible at once, in batches of 10 per queue; one with no receive left is settled on its
 * own, and re-sent.
 */
export async function handBackUnstarted(
  deps: SettleDeps,
  leases: readonly Lease[],
  reason: string,
  describe: (lease: Lease) => JobInfo,
): Promise<void> {
  await Promise.all(leases.map((lease) => deps.heartbeat.untrack(lease)));
  const held = leases.filter((l) => !l.lost);
  const last = held.filter((l) => atReceiveLimit(l.message, deps.maxReceiveCount(l.message.queueUrl)));
  const rest = held.filter((l) => !last.includes(l));
  const calls: Promise<void>[] = last.map((lease) =>
    settle(deps, lease, describe(lease), { kind: 'release', reason, delaySeconds: 0, abandoned: false }),
  );
  for (const [queueUrl, list] of groupByQueue(rest)) {
    calls.push(
      inBatches(list, (batch) =>
        deps.sqs.changeVisibilityBatch(
          queueUrl,
          batch.map((l, i) => ({ id: String(i), receiptHandle: l.message.receiptHandle, visibilityTimeout: 0 })),
        ),
      ).then((failed) => {
        for (const { failure } of failed)
          deps.onError('hand back', new Error(`could not hand a message back: ${failure.code} ${failure.message}`));
      }),
    );
  }
  await Promise.all(calls);
  if (leases.length > 0) deps.logger.info({ handedBack: leases.length, resent: last.length, reason }, 'handed back unstarted messages');
}
