import { randomUUID } from 'node:crypto';
import type { MessageAttributes, ReceivedMessage } from '../core/message.js';
import { isFifoQueue } from '../core/queue-url.js';
import type { QueuePort } from '../ports/queue.js';
import { ATTR_DLQ_AT, ATTR_DLQ_ERROR, ATTR_DLQ_REASON, ATTR_DLQ_RECEIVE_COUNT, ATTR_DLQ_SOURCE, ATTR_REPLAY } from '../core/dead-letter.js';
import { inBatches } from '../core/sqs-batch.js';
import { ATTR_DEAD_LETTERED, ATTR_FIRST_SENT_AT, ATTR_ORIGIN, ATTR_PRIOR_RECEIVES } from '../core/delivery.js';
import { type DeadLetter, describeDeadLetter, holdFor, makeVisible, receiveDeadLetters } from './dlq.js';

/*
 * A replay moves each message that was in the DLQ when it began at most once, then stops:
 *
 *  - everything it sends carries `sqsjobs-replay: <this replay's id>`. The worker keeps that
 *    attribute when it dead-letters or re-sends the job, and SQS's redrive keeps every attribute, so
 *    a replayed job that fails back into the DLQ while the replay runs is recognised and left there;
 *  - a dead letter our worker wrote after the replay began (`sqsjobs-dlq-at`) is left too: it was
 *    not there when the operator asked;
 *  - messages it leaves are held out of sight while it runs, so each is looked at once; it stops
 *    when the DLQ has nothing left to show, or when a message it has seen comes back into view
 *    (its hold ran out: the replay has been through the whole DLQ).
 *
 * It is always done here, as send then delete, 10 at a time, never by an SQS message move task: a
 * move task cannot mark what it moves, carries our DLQ and re-send attributes back, and on
 * LocalStack keeps each message's receive count, so the job would come back with its retry budget
 * spent. A sent copy is a new message: SQS counts its receives from zero, and the attributes that
 * carried the job's attempt across re-sends are dropped, so its attempts start again at 1.
 */

/**
 * How long a message received by the replay stays out of sight: short, so a replay killed outright
 * leaves what it was about to move hidden for half a minute only...
 */
const RECEIVE_HOLD_SECONDS = 30;
/** ...while one it leaves is held this long, so the replay looks at each message once. */
const LEAVE_HOLD_SECONDS = 300;

export interface ReplayOptions {
  readonly dlqUrl: string;
  /** Where a message goes when it does not name its source (SQS redrive does not). */
  readonly sourceQueueUrl: string | undefined;
  readonly job?: string | undefined;
  readonly id?: string | undefined;
  readonly limit?: number | undefined;
  readonly dryRun?: boolean | undefined;
  /** Stop between batches (e.g. on Ctrl-C): everything moved so far is moved, the rest stays. */
  readonly signal?: AbortSignal | undefined;
  readonly onMoved?: (letter: DeadLetter, to: string) => void;
}

/** Why a message the replay looked at was left in the DLQ without being chosen. */
export interface PassedOver {
  /** Not matched by --job / --id (or past --limit). */
  readonly notChosen: number;
  /** Moved by this replay already, and dead-lettered again since (it ran and failed). */
  readonly movedByThisReplay: number;
  /** Dead-lettered by a worker after the replay began. */
  readonly arrivedAfterStart: number;
}

export interface ReplayResult {
  /** This replay's id, carried by every message it sent (`sqsjobs-replay`). */
  readonly replayId: string;
  readonly moved: number;
  /** Chosen but left in the DLQ: dry run, no known source, or a send SQS refused. */
  readonly skipped: { readonly letter: DeadLetter; readonly why: string }[];
  readonly passedOver: PassedOver;
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
]);

function replayAttributes(m: ReceivedMessage, replayId: string): MessageAttributes {
  const kept = Object.entries(m.attributes).filter(([name]) => !NOT_CARRIED_BACK.has(name));
  return { ...Object.fromEntries(kept), [ATTR_REPLAY]: { DataType: 'String', StringValue: replayId } };
}

interface Chosen {
  readonly m: ReceivedMessage;
  readonly letter: DeadLetter;
  readonly to: string;
}

/**
 * Move chosen dead letters back to their source queue: send, then delete from the DLQ. A crash
 * between the two may leave a copy in both (the job id is kept, so the worker's dedupe still
 * applies); it never loses one.
 */
export async function replayDeadLetters(queue: QueuePort, o: ReplayOptions): Promise<ReplayResult> {
  const replayId = randomUUID();
  const startedAt = Date.now();
  const limit = o.limit ?? Number.POSITIVE_INFINITY;
  const seen = new Set<string>();
  /** Messages left in the DLQ, by MessageId (the latest receipt of each), made visible at the end. */
  const left = new Map<string, ReceivedMessage>();
  const skipped: { letter: DeadLetter; why: string }[] = [];
  const passedOver = { notChosen: 0, movedByThisReplay: 0, arrivedAfterStart: 0 };
  let moved = 0;
  let matched = 0;
  const leave = (m: ReceivedMessage) => left.set(m.messageId, m);
  try {
    while (matched < limit && !o.signal?.aborted) {
      const batch = await receiveDeadLetters(queue, o.dlqUrl, 10, RECEIVE_HOLD_SECONDS);
      if (batch.length === 0) break;
      const cycled = batch.some((m) => seen.has(m.messageId));
      const chosen: Chosen[] = [];
      for (const m of batch) {
        if (seen.has(m.messageId)) {
          leave(m);
          continue;
        }
        seen.add(m.messageId);
        const letter = describeDeadLetter(m);
        const history = historyOf(m, replayId, startedAt);
        if (history !== undefined) {
          passedOver[history]++;
          leave(m);
          continue;
        }
        const wanted = (o.job === undefined || letter.jobName === o.job) && (o.id === undefined || letter.jobId === o.id);
        if (!wanted || matched >= limit) {
          passedOver.notChosen++;
          leave(m);
          continue;
        }
        matched++;
        const to = letter.sourceQueueUrl ?? o.sourceQueueUrl;
        if (o.dryRun || to === undefined) {
          skipped.push({ letter, why: o.dryRun ? 'dry run' : 'the message does not name its source queue: pass --queue' });
          leave(m);
        } else chosen.push({ m, letter, to });
      }
      moved += await moveBatch(queue, o, replayId, chosen, skipped, leave);
      const leftNow = batch.filter((m) => left.get(m.messageId) === m);
      // Not fatal: a message that comes back early ends the pass (it reads as seen) with less looked at.
      await holdFor(queue, o.dlqUrl, leftNow, LEAVE_HOLD_SECONDS).catch(() => {});
      if (cycled) break;
    }
  } finally {
    // Not fatal: a message not made visible here comes back when its hold ends (at most 5 min).
    await makeVisible(queue, o.dlqUrl, [...left.values()]).catch(() => {});
  }
  return { replayId, moved, skipped, passedOver };
}

/** Why a message must not be moved by this replay, or undefined when it may be. */
function historyOf(m: ReceivedMessage, replayId: string, startedAt: number): 'movedByThisReplay' | 'arrivedAfterStart' | undefined {
  if (m.attributes[ATTR_REPLAY]?.StringValue === replayId) return 'movedByThisReplay';
  const at = Date.parse(m.attributes[ATTR_DLQ_AT]?.StringValue ?? '');
  if (Number.isFinite(at) && at > startedAt) return 'arrivedAfterStart';
  return undefined;
}

async function moveBatch(
  queue: QueuePort,
  o: ReplayOptions,
  replayId: string,
  items: Chosen[],
  skipped: { letter: DeadLetter; why: string }[],
  leave: (m: ReceivedMessage) => void,
): Promise<number> {
  const sent: Chosen[] = [];
  const byTarget = new Map<string, Chosen[]>();
  for (const item of items) byTarget.set(item.to, [...(byTarget.get(item.to) ?? []), item]);
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
            ...(fifo ? { groupId: m.groupId ?? m.messageId, deduplicationId: `replay-${m.messageId}` } : {}),
          },
        })),
      );
      return out.failed;
    });
    const refused = new Map(failed.map((f) => [f.item, f.failure]));
    for (const item of group) {
      const f = refused.get(item);
      if (f === undefined) sent.push(item);
      else {
        skipped.push({ letter: item.letter, why: `SQS refused the send: ${f.code} ${f.message}`.trim() });
        leave(item.m);
      }
    }
  }
  if (sent.length === 0) return 0;
  const undeleted = await inBatches(sent, (batch) =>
    queue.deleteBatch(
      o.dlqUrl,
      batch.map(({ m }, i) => ({ id: String(i), receiptHandle: m.receiptHandle })),
    ),
  );
  // Sent but still in the DLQ: a later replay would send it again; the job id keeps it from running twice.
  for (const { item, failure } of undeleted)
    skipped.push({ letter: item.letter, why: `moved, but the DLQ copy could not be deleted: ${failure.code}` });
  for (const item of sent) o.onMoved?.(item.letter, item.to);
  return sent.length;
}
