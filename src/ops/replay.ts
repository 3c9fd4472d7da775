import type { MessageAttributes, OutgoingMessage, ReceivedMessage } from '../core/message.js';
import { isFifoQueue } from '../core/queue-url.js';
import type { ArchiveStore } from '../ports/archive.js';
import type { QueuePort } from '../ports/queue.js';
import { ATTR_DLQ_AT, ATTR_DLQ_ERROR, ATTR_DLQ_REASON, ATTR_DLQ_RECEIVE_COUNT, ATTR_DLQ_SOURCE, ATTR_REPLAY } from '../core/dead-letter.js';
import { chunkBySize, inBatches } from '../core/sqs-batch.js';
import { SQS_MAX_MESSAGE_BYTES } from '../core/sqs-limits.js';
import { messageSize } from '../core/sqs-text.js';
import { ATTR_DEAD_LETTERED, ATTR_FIRST_SENT_AT, ATTR_ORIGIN, ATTR_PRIOR_RECEIVES, ATTR_UNFINISHED_RUNS } from '../core/delivery.js';
import { markReplayed } from './archive-format.js';
import type { DeadLetter } from './dlq.js';
import { type Chosen, type Shortfall, type SweepOptions, type SweepResult, sweepDeadLetters } from './sweep.js';

/*
 * A replay is a sweep of the DLQ (sweep.ts: each message that was there when it began, at most
 * once): every chosen message is sent back to its source queue, marked `sqsjobs-replay: <sweep id>`
 * (so one that fails back into the DLQ while the replay runs is recognised and left), then deleted.
 *
 * It is always done here, as send then delete, 10 at a time (fewer where they would pass SQS's
 * 1 MiB a batch), never by an SQS message move task: a move task cannot mark what it moves,
 * carries our DLQ and re-send attributes back, and on LocalStack keeps each message's receive
 * count, so the job would come back with its retry budget spent. A sent copy is a new message:
 * SQS counts its receives from zero, and the attributes that carried the job's attempt across
 * re-sends are dropped, so its attempts start again at 1.
 */

interface ReplayOptions extends SweepOptions {
  /** Where a message goes when it does not name its source (SQS redrive does not). */
  readonly sourceQueueUrl: string | undefined;
  readonly onMoved?: (letter: DeadLetter, to: string) => void;
  /**
   * An archive of this DLQ (`dlq replay --archive`): each message moved that has a record there
   * (an archive run that stopped between its write and its delete left it in both) gets its replay
   * mark, after the send and before the delete, so a later `dlq replay --from` leaves it. Without
   * it, that replay sends the job again and only its job id keeps it from running twice.
   */
  readonly archive?: { readonly store: ArchiveStore; readonly prefix: string } | undefined;
}

interface ReplayResult extends SweepResult {
  /** This replay's id, carried by every message it sent (`sqsjobs-replay`). */
  readonly replayId: string;
  readonly moved: number;
  /** With `archive`: how many of those moved had a record there, and were marked. */
  readonly marked: number;
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

/** The copy of `m` a replay sends (see sendBack). */
function replayCopy(m: ReceivedMessage, replayId: string, fifo: boolean): OutgoingMessage {
  return {
    body: m.body,
    attributes: replayAttributes(m, replayId),
    awsTraceHeader: m.awsTraceHeader,
    ...(fifo ? { groupId: m.groupId ?? m.messageId, deduplicationId: `replay-${m.messageId}` } : {}),
  };
}

/**
 * Move the chosen dead letters back to their source queue: send, then delete from the DLQ. A crash
 * between the two may leave a copy in both (the job id is kept, so the worker's dedupe still
 * applies); it never loses one.
 */
export async function replayDeadLetters(queue: QueuePort, o: ReplayOptions): Promise<ReplayResult> {
  const target = (letter: DeadLetter) => letter.sourceQueueUrl ?? o.sourceQueueUrl;
  let marked = 0;
  const result = await sweepDeadLetters(
    queue,
    o,
    async (chosen, sweepId) => {
      const { short, markedNow } = await moveBatch(queue, o, sweepId, chosen, target);
      marked += markedNow;
      return short;
    },
    (letter) => (target(letter) === undefined ? 'the message does not name its source queue: pass --queue' : undefined),
  );
  return { ...result, replayId: result.sweepId, moved: result.done, marked };
}

async function moveBatch(
  queue: QueuePort,
  o: ReplayOptions,
  replayId: string,
  items: readonly Chosen[],
  target: (letter: DeadLetter) => string | undefined,
): Promise<{ short: Shortfall[]; markedNow: number }> {
  const { sent, short } = await sendBack(queue, replayId, items, target);
  if (sent.length === 0) return { short, markedNow: 0 };
  const marks =
    o.archive === undefined
      ? undefined
      : await markReplayed(
          o.archive.store,
          o.archive.prefix,
          replayId,
          sent.map(({ item, to }) => ({ messageId: item.m.messageId, to })),
          true,
        );
  // Moved all the same: a replay from the archive may send it again, and its job id keeps it from running twice.
  for (const { item } of sent) {
    const why = marks?.failed.get(item.m.messageId);
    if (why !== undefined)
      short.push({ chosen: item, why: `moved, but its mark in the archive could not be written: ${why}`, acted: true });
  }
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
  return { short, markedNow: marks?.marked.length ?? 0 };
}

/**
 * The replay's send, shared by the DLQ replay and the archive's (`dlq replay --from`): each dead
 * letter is sent to the queue `target` names (every one has one: the caller refused the rest) as
 * a replayed copy: the same body, so the same job id (the worker's dedupe lock runs a job id that
 * completed once only), its attributes but those of its past, and `sqsjobs-replay: <replayId>`;
 * on a FIFO queue its group, and `replay-<DLQ message id>` as the deduplication id (a copy sent
 * from the DLQ and one from the archive within SQS's 5 minutes are one). In batches of at most 10
 * entries and SQS's 1 MiB, body and attributes counted as the producer counts them (messages of
 * 200 KB go five to a call). Answers what was sent, and what SQS refused (not sent).
 */
export async function sendBack(
  queue: QueuePort,
  replayId: string,
  items: readonly Chosen[],
  target: (letter: DeadLetter) => string | undefined,
): Promise<{ sent: { item: Chosen; to: string }[]; short: Shortfall[] }> {
  const short: Shortfall[] = [];
  const sent: { item: Chosen; to: string }[] = [];
  const byTarget = new Map<string, Chosen[]>();
  for (const item of items) {
    const to = target(item.letter)!;
    byTarget.set(to, [...(byTarget.get(to) ?? []), item]);
  }
  for (const [to, group] of byTarget) {
    const fifo = isFifoQueue(to);
    const copies = new Map(group.map((item) => [item, replayCopy(item.m, replayId, fifo)]));
    const send = async (batch: readonly Chosen[]) => {
      const entries = batch.map((item, i) => ({ id: String(i), message: copies.get(item)! }));
      return (await queue.sendBatch(to, entries)).failed;
    };
    // AWSTraceHeader is a system attribute: SQS does not count it.
    const bytes = (item: Chosen) => messageSize(item.m.body, copies.get(item)!.attributes);
    const failed = await inBatches(group, send, (all) => chunkBySize(all, bytes, SQS_MAX_MESSAGE_BYTES));
    const refused = new Map(failed.map((f) => [f.item, f.failure]));
    for (const item of group) {
      const f = refused.get(item);
      if (f === undefined) sent.push({ item, to });
      else short.push({ chosen: item, why: `SQS refused the send: ${f.code} ${f.message}`.trim() });
    }
  }
  return { sent, short };
}
