import type { MessageAttributes, ReceivedMessage } from '../core/message.js';
import { isFifoQueue } from '../core/queue-url.js';
import type { QueuePort } from '../ports/queue.js';
import { ATTR_DLQ_AT, ATTR_DLQ_ERROR, ATTR_DLQ_REASON, ATTR_DLQ_RECEIVE_COUNT, ATTR_DLQ_SOURCE, ATTR_REPLAY } from '../core/dead-letter.js';
import { inBatches } from '../core/sqs-batch.js';
import { ATTR_DEAD_LETTERED, ATTR_FIRST_SENT_AT, ATTR_ORIGIN, ATTR_PRIOR_RECEIVES, ATTR_UNFINISHED_RUNS } from '../core/delivery.js';
import type { DeadLetter } from './dlq.js';
import { type Chosen, type Shortfall, type SweepOptions, type SweepResult, sweepDeadLetters } from './sweep.js';

/*
 * A replay is a sweep of the DLQ (sweep.ts: each message that was there when it began, at most
 * once): every chosen message is sent back to its source queue, marked `sqsjobs-replay: <sweep id>`
 * (so one that fails back into the DLQ while the replay runs is recognised and left), then deleted.
 *
 * It is always done here, as send then delete, 10 at a time, never by an SQS message move task: a
 * move task cannot mark what it moves, carries our DLQ and re-send attributes back, and on
 * LocalStack keeps each message's receive count, so the job would come back with its retry budget
 * spent. A sent copy is a new message: SQS counts its receives from zero, and the attributes that
 * carried the job's attempt across re-sends are dropped, so its attempts start again at 1.
 */

interface ReplayOptions extends SweepOptions {
  /** Where a message goes when it does not name its source (SQS redrive does not). */
  readonly sourceQueueUrl: string | undefined;
  readonly onMoved?: (letter: DeadLetter, to: string) => void;
}

interface ReplayResult extends SweepResult {
  /** This replay's id, carried by every message it sent (`sqsjobs-replay`). */
  readonly replayId: string;
  readonly moved: number;
}

/** Our attributes that describe a message's past, dropped from a replayed copy: it starts afresh. */
const NOT_CARRIED_BACK = new Set([
  ATTR_DLQ_REASON,
  ATTR_DLQ_ERROR,
  ATTR_DLQ_SOURCE,
  ATTR_DLQ_RECEIVE_COUNT,
  ATTR_DLQ_AT,
  ATTR_REPLAY,
  ATTR_PRIOR_RECEIVES,
  ATTR_FIRST_SENT_AT,
  ATTR_ORIGIN,
  ATTR_DEAD_LETTERED,
  ATTR_UNFINISHED_RUNS,
]);

function replayAttributes(m: ReceivedMessage, replayId: string): MessageAttributes {
  const kept = Object.entries(m.attributes).filter(([name]) => !NOT_CARRIED_BACK.has(name));
  return { ...Object.fromEntries(kept), [ATTR_REPLAY]: { DataType: 'String', StringValue: replayId } };
}

/**
 * Move the chosen dead letters back to their source queue: send, then delete from the DLQ. A crash
 * between the two may leave a copy in both (the job id is kept, so the worker's dedupe still
 * applies); it never loses one.
 */
export async function replayDeadLetters(queue: QueuePort, o: ReplayOptions): Promise<ReplayResult> {
  const target = (letter: DeadLetter) => letter.sourceQueueUrl ?? o.sourceQueueUrl;
  const result = await sweepDeadLetters(
    queue,
    o,
    (chosen, sweepId) => moveBatch(queue, o, sweepId, chosen, target),
    (letter) => (target(letter) === undefined ? 'the message does not name its source queue: pass --queue' : undefined),
  );
  return { ...result, replayId: result.sweepId, moved: result.done };
}

async function moveBatch(
  queue: QueuePort,
  o: ReplayOptions,
  replayId: string,
  items: readonly Chosen[],
  target: (letter: DeadLetter) => string | undefined,
): Promise<Shortfall[]> {
  const short: Shortfall[] = [];
  const sent: { item: Chosen; to: string }[] = [];
  const byTarget = new Map<string, Chosen[]>();
  for (const item of items) {
    const to = target(item.letter)!;
    byTarget.set(to, [...(byTarget.get(to) ?? []), item]);
  }
  for (const [to, group] of byTarget) {
    const fifo = isFifoQueue(to);
    const failed = await inBatches(group, async (batch) => {
      const out = await queue.sendBatch(
        to,
        batch.map(({ m }, i) => ({
          id: String(i),
          message: {
            body: m.body,
            attributes: replayAttributes(m, replayId),
            awsTraceHeader: m.awsTraceHeader,
            ...(fifo ? { groupId: m.groupId ?? m.messageId, deduplicationId: `replay-${m.messageId}` } : {}),
          },
        })),
      );
      return out.failed;
    });
    const refused = new Map(failed.map((f) => [f.item, f.failure]));
    for (const item of group) {
      const f = refused.get(item);
      if (f === undefined) sent.push({ item, to });
      else short.push({ chosen: item, why: `SQS refused the send: ${f.code} ${f.message}`.trim() });
    }
  }
  if (sent.length === 0) return short;
  const undeleted = await inBatches(sent, (batch) =>
    queue.deleteBatch(
      o.dlqUrl,
      batch.map(({ item }, i) => ({ id: String(i), receiptHandle: item.m.receiptHandle })),
    ),
  );
  // Sent but still in the DLQ: a later replay would send it again; the job id keeps it from running twice.
  for (const { item, failure } of undeleted)
    short.push({ chosen: item.item, why: `moved, but the DLQ copy could not be deleted: ${failure.code}`, acted: true });
  for (const { item, to } of sent) o.onMoved?.(item.letter, to);
  return short;
}
