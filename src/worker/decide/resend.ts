import { carriedAttributes } from '../../core/dead-letter.js';
import {
  ATTR_DEAD_LETTERED,
  ATTR_FIRST_SENT_AT,
  ATTR_ORIGIN,
  ATTR_RATE_SLOT,
  ATTR_PRIOR_RECEIVES,
  ATTR_UNFINISHED_RUNS,
  attemptOf,
  firstSentAt,
  originOf,
  type UnfinishedRuns,
  unfinishedRunsOf,
  unfinishedRunsText,
} from '../../core/delivery.js';
import type { MessageAttribute, OutgoingMessage, ReceivedMessage } from '../../core/message.js';
import { isFifoQueue } from '../../core/queue-url.js';
import { SQS_MAX_DELAY_SECONDS } from '../../core/sqs-limits.js';

/** True when handing `m` back by visibility would let SQS's redrive move it to the DLQ on its next receive. */
export function atReceiveLimit(m: ReceivedMessage, maxReceiveCount: number | undefined): boolean {
  return maxReceiveCount !== undefined && m.receiveCount >= maxReceiveCount;
}

/** A message's receives: SQS's count (what its redrive policy counts, up to `max`) and the job's attempt (across re-sends). */
export interface Receives {
  readonly count: number;
  readonly attempt: number;
  readonly max: number | undefined;
}

/**
 * Whether a job may wait held here. A held message spends a receive each time its worker dies, so
 * one that has spent more than half its receives before the DLQ is deferred instead (a fresh
 * count), so crashes alone do not use up its budget. Once per budget: a copy that carries at least
 * half a budget of prior receives (one deferred so) may wait, so a job that keeps failing still
 * ends in the DLQ, and a queue with maxReceiveCount 1 (no receive to spare) never re-sends for it.
 */
export function mayHold(r: Receives): boolean {
  if (r.max === undefined || r.count <= r.max / 2) return true;
  return r.attempt - r.count >= Math.floor(r.max / 2);
}

/** Said with a deferral that mayHold refused. */
export const NOT_HELD = '; past half its receives before the DLQ, not held';

/**
 * The re-sent copy of `m`: the body untouched, the sender's attributes (as many as fit beside ours)
 * and X-Ray trace header, visible after `delaySeconds` (at most SQS's 900; FIFO queues have no
 * per-message delay, and the copy joins the back of its group with a new deduplication id).
 */
export function resentMessage(
  m: ReceivedMessage,
  delaySeconds: number,
  o: {
    /** False for a deferral (its tenant at its cap, its rate's turn ahead): the job did not run, this receive is not an attempt. */
    readonly countThisReceive?: boolean;
    /** A copy only to be counted in its fan-out (see ATTR_DEAD_LETTERED). */
    readonly deadLettered?: boolean;
    /** The rate slot it reserved, for it to start on when it comes back (see ATTR_RATE_SLOT). */
    readonly rateSlotAt?: number | undefined;
    /** The job's runs that never finished, this message's counted in (default: as the message says; see ATTR_UNFINISHED_RUNS). */
    readonly unfinishedRuns?: UnfinishedRuns | undefined;
  } = {},
): OutgoingMessage {
  const prior = attemptOf(m) - (o.countThisReceive === false ? 1 : 0);
  const unfinished = o.unfinishedRuns ?? unfinishedRunsOf(m);
  const ours: Record<string, MessageAttribute> = {
    [ATTR_PRIOR_RECEIVES]: { DataType: 'Number', StringValue: String(prior) },
    [ATTR_FIRST_SENT_AT]: { DataType: 'Number', StringValue: String(firstSentAt(m)) },
    [ATTR_ORIGIN]: { DataType: 'String', StringValue: originOf(m) },
    ...(o.deadLettered ? { [ATTR_DEAD_LETTERED]: { DataType: 'String', StringValue: 'true' } } : {}),
    ...(unfinished.runs === 0 ? {} : { [ATTR_UNFINISHED_RUNS]: { DataType: 'String', StringValue: unfinishedRunsText(unfinished) } }),
    ...(o.rateSlotAt === undefined ? {} : { [ATTR_RATE_SLOT]: { DataType: 'Number', StringValue: String(Math.round(o.rateSlotAt)) } }),
  };
  const fifo = isFifoQueue(m.queueUrl);
  return {
    body: m.body,
    attributes: { ...carriedAttributes(m.attributes, ours), ...ours },
    groupId: m.groupId,
    deduplicationId: fifo ? `${m.messageId}-resent-${m.receiveCount}` : undefined,
    delaySeconds: fifo ? undefined : Math.min(SQS_MAX_DELAY_SECONDS, Math.max(0, Math.round(delaySeconds))),
    awsTraceHeader: m.awsTraceHeader,
  };
}
