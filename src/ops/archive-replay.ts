import { randomUUID } from 'node:crypto';
import { ATTR_REPLAY } from '../core/dead-letter.js';
import { chunk } from '../core/sqs-batch.js';
import type { ArchiveStore } from '../ports/archive.js';
import type { QueuePort } from '../ports/queue.js';
import { letterKey, markReplayed } from './archive-format.js';
import { walkArchive } from './archive-list.js';
import type { DeadLetter } from './dlq.js';
import { type DeadLetterFilter, matchesFilter } from './dlq-filter.js';
import { sendBack } from './replay.js';
import type { Chosen } from './sweep.js';

/*
 * `dlq replay --from s3://...`: the DLQ replay's send (replay.ts, sendBack), fed from the archive.
 * Where the DLQ replay deletes what it sent, this one writes a mark beside the record (the record
 * stays: it is the archive), and a later replay leaves what is marked. By the same rules as the
 * DLQ's, a record carrying this replay's `sqsjobs-replay` (it was sent back, failed, and was
 * archived again while this replay ran) or archived after the replay began is left.
 *
 * Once only, in layers: the mark (a second replay from the archive sends nothing; nor does one
 * after `dlq replay --archive` moved the DLQ copy of a record, replay.ts), and the job id, which
 * the copy keeps: a job sent back twice (a crash between the send and the mark; a dead letter in
 * both the DLQ and the archive after a crashed archive run, replayed from the DLQ without
 * --archive and from the archive) runs once only while the worker's dedupe lock remembers its
 * completed job id (completedTtlSeconds, a day by default), and no second copy runs while the
 * first runs. Marked records are not read again (walkArchive's skipMarked).
 */

/** What `dlq replay --from` is asked to do. */
export interface ArchiveReplayOptions {
  /** The archive's key prefix: '' or ending in '/' (parseArchiveUrl). */
  readonly prefix: string;
  /** Where a record goes when it does not name its source queue (SQS redrive does not). */
  readonly sourceQueueUrl: string | undefined;
  /** Which dead letters (default: all); its ages are from when each was dead-lettered, as in the DLQ. */
  readonly filter?: DeadLetterFilter | undefined;
  /** Send back at most this many. */
  readonly limit?: number | undefined;
  /** Count and describe what would be sent; send and mark nothing. */
  readonly dryRun?: boolean | undefined;
  /** Stop between batches (Ctrl-C): what was sent is sent (and marked), the rest stays. */
  readonly signal?: AbortSignal | undefined;
  readonly onMoved?: ((letter: DeadLetter, to: string) => void) | undefined;
}

/** What a replay from the archive did. */
export interface ArchiveReplayResult {
  /** This replay's id, carried by every message it sent (`sqsjobs-replay`). */
  readonly replayId: string;
  /** Matched by the filter (within the limit): in a dry run, what would be sent. */
  readonly matched: number;
  /** Sent back (and marked, but those `skipped` says were not). */
  readonly moved: number;
  /** Matched but not (wholly) sent, with why; `key`: the record's. */
  readonly skipped: { readonly key: string; readonly letter: DeadLetter | undefined; readonly why: string }[];
  readonly passedOver: {
    /** Not matched by the filter. */
    readonly notChosen: number;
    /** Marked: a replay sent it back before. */
    readonly replayedBefore: number;
    /** Sent by this replay, dead-lettered and archived again since. */
    readonly movedByThisReplay: number;
    /** Archived after this replay began. */
    readonly archivedAfterStart: number;
  };
  /** Whether it went through the whole archive (false when the limit or the signal stopped it first). */
  readonly complete: boolean;
}

/** Send the archived dead letters the filter matches back to their queues, each once (see above). */
export async function replayArchived(queue: QueuePort, store: ArchiveStore, o: ArchiveReplayOptions): Promise<ArchiveReplayResult> {
  const replayId = randomUUID();
  const startedAt = Date.now();
  const limit = o.limit ?? Number.POSITIVE_INFINITY;
  const target = (letter: DeadLetter) => letter.sourceQueueUrl ?? o.sourceQueueUrl;
  const skipped: { key: string; letter: DeadLetter | undefined; why: string }[] = [];
  const passedOver = { notChosen: 0, replayedBefore: 0, movedByThisReplay: 0, archivedAfterStart: 0 };
  let matched = 0;
  let moved = 0;
  let chosen: Chosen[] = [];
  const flush = async () => {
    for (const batch of chunk(chosen)) moved += await sendAndMark(queue, store, o, replayId, batch, target, skipped);
    chosen = [];
  };
  let complete = true;
  for await (const r of walkArchive(store, o.prefix, { skipMarked: true })) {
    if (o.signal?.aborted || matched >= limit) {
      complete = false;
      break;
    }
    if ('unreadable' in r) {
      skipped.push({ key: r.key, letter: undefined, why: r.unreadable });
      continue;
    }
    if ('marked' in r || r.replayed) passedOver.replayedBefore++;
    else if (r.m.attributes[ATTR_REPLAY]?.StringValue === replayId) passedOver.movedByThisReplay++;
    else if (Date.parse(r.record.archivedAt) > startedAt) passedOver.archivedAfterStart++;
    else if (!matchesFilter(r.letter, o.filter ?? {}, startedAt)) passedOver.notChosen++;
    else {
      matched++;
      const why = o.dryRun
        ? 'dry run'
        : target(r.letter) === undefined
          ? 'the message does not name its source queue: pass --queue'
          : undefined;
      if (why !== undefined) skipped.push({ key: r.key, letter: r.letter, why });
      else chosen.push({ m: r.m, letter: r.letter });
      if (chosen.length >= 10) await flush();
    }
  }
  await flush();
  return { replayId, matched, moved, skipped, passedOver, complete };
}

/** Send one batch back, then mark each sent; answers how many were sent. */
async function sendAndMark(
  queue: QueuePort,
  store: ArchiveStore,
  o: ArchiveReplayOptions,
  replayId: string,
  batch: readonly Chosen[],
  target: (letter: DeadLetter) => string | undefined,
  skipped: { key: string; letter: DeadLetter | undefined; why: string }[],
): Promise<number> {
  const { sent, short } = await sendBack(queue, replayId, batch, target);
  for (const s of short) skipped.push({ key: letterKey(o.prefix, s.chosen.m.messageId), letter: s.chosen.letter, why: s.why });
  const { failed } = await markReplayed(
    store,
    o.prefix,
    replayId,
    sent.map(({ item, to }) => ({ messageId: item.m.messageId, to })),
  );
  for (const { item, to } of sent) {
    const why = failed.get(item.m.messageId);
    // Sent, not marked: a later replay sends it again, and the job id keeps it from running twice.
    if (why !== undefined)
      skipped.push({
        key: letterKey(o.prefix, item.m.messageId),
        letter: item.letter,
        why: `sent, but its replay mark could not be written: ${why}`,
      });
    o.onMoved?.(item.letter, to);
  }
  return sent.length;
}
