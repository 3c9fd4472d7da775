import { ConfigError, SqsJobsError } from '../core/errors.js';
import { inBatches } from '../core/sqs-batch.js';
import type { ArchiveStore } from '../ports/archive.js';
import type { QueuePort } from '../ports/queue.js';
import type { QueueAdmin } from '../ports/queue-admin.js';
import { letterKey, toRecord } from './archive-format.js';
import type { DeadLetter } from './dlq.js';
import { type Chosen, type Shortfall, type SweepResult, sweepDeadLetters } from './sweep.js';

/*
 * An archive run is a sweep of the DLQ (sweep.ts: each message there when it began looked at
 * once): each message sent to the DLQ long enough ago is written to the archive, one object per
 * message keyed by its DLQ message id (archive-format.ts), and deleted from the DLQ only once the
 * archive has acknowledged the write. So:
 *
 *   receive 10 ──▶ put each (at once) ──▶ the puts that resolved ──▶ DeleteMessageBatch of those
 *                   a put that failed: left in the DLQ        ▲
 *                                                             └── a crash here: in both, never in neither
 *
 * A message in both is archived again by the next run (the same key) and then deleted. Replayed
 * from both, its job runs once: `dlq replay --archive` marks its record as it moves the DLQ copy
 * (replay.ts), so a replay from the archive leaves it; without that, only the job id (the same in
 * both) does, through the worker's dedupe lock, while it remembers the job (completedTtlSeconds).
 * Messages not old enough are left, held out of sight while the run goes on (each looked at once:
 * one receive each) and made visible when it ends.
 */

/** What `dlq archive` is asked to do. */
export interface ArchiveOptions {
  readonly dlqUrl: string;
  /** The archive's key prefix: '' or ending in '/' (parseArchiveUrl). */
  readonly prefix: string;
  /**
   * Archive the dead letters whose DLQ message was sent at least this many seconds ago: its
   * SentTimestamp, the time SQS counts its retention in the DLQ from (or earlier). A dead letter
   * our worker sent is a new message, its clock started by that send; SQS's redrive keeps a
   * standard queue's original enqueue time in SentTimestamp and counts retention from it, and
   * resets both on a FIFO queue. So an age below the DLQ's retention (checkRetention) archives each
   * message before SQS can expire it. (Not the job's first send, `sqsjobs-first-sent-at`: a job
   * first sent 10 days ago and dead-lettered today has 14 days left in the DLQ, not 4.)
   */
  readonly olderThanSeconds: number;
  /** Archive at most this many. */
  readonly limit?: number | undefined;
  /** Count what would be archived; write and delete nothing. */
  readonly dryRun?: boolean | undefined;
  /** Stop between batches (Ctrl-C): what was archived is archived, the rest stays. */
  readonly signal?: AbortSignal | undefined;
  /** Told of each dead letter once its record is stored (`key`), before its DLQ copy is deleted. */
  readonly onArchived?: ((letter: DeadLetter, key: string) => void) | undefined;
}

/** What an archive run did. */
export interface ArchiveResult extends SweepResult {
  /** Written to the archive (and deleted from the DLQ, but those `skipped` says were not). */
  readonly archived: number;
  /** Left in the DLQ because they were not old enough; the rest of `passedOver.notChosen` were past the limit. */
  readonly notOldEnough: number;
  /**
   * Why the run stopped early: every write of a batch failed (no such bucket, access denied, no
   * KMS permission...), so it stopped rather than try the rest. Those messages stay in the DLQ.
   */
  readonly stoppedBy: string | undefined;
}

/**
 * Write the dead letters older than `olderThanSeconds` to the archive, each deleted from the DLQ
 * only after its write was acknowledged (see above): nothing leaves the DLQ that is not archived.
 */
export async function archiveDeadLetters(queue: QueuePort, store: ArchiveStore, o: ArchiveOptions): Promise<ArchiveResult> {
  const cutoff = Date.now() - o.olderThanSeconds * 1000;
  let notOldEnough = 0;
  // Asked once of each message the sweep meets (it skips those it has seen).
  const oldEnough = (m: { readonly sentAt: number }) => {
    if (m.sentAt <= cutoff) return true;
    notOldEnough++;
    return false;
  };
  const stop = new AbortController();
  let stoppedBy: string | undefined;
  const act = async (chosen: readonly Chosen[]): Promise<Shortfall[]> => {
    const at = new Date();
    const keys = chosen.map((c) => letterKey(o.prefix, c.m.messageId));
    const writes = await Promise.allSettled(chosen.map((c, i) => store.put(keys[i]!, JSON.stringify(toRecord(c.m, at)))));
    const short: Shortfall[] = [];
    const stored: Chosen[] = [];
    writes.forEach((w, i) => {
      const c = chosen[i]!;
      if (w.status === 'rejected') short.push({ chosen: c, why: `not archived, left in the DLQ: ${errorText(w.reason)}` });
      else {
        stored.push(c);
        o.onArchived?.(c.letter, keys[i]!);
      }
    });
    if (stored.length === 0) {
      stoppedBy = short[0]?.why;
      stop.abort();
      return short;
    }
    const undeleted = await inBatches(stored, (batch) =>
      queue.deleteBatch(
        o.dlqUrl,
        batch.map((c, i) => ({ id: String(i), receiptHandle: c.m.receiptHandle })),
      ),
    );
    // In both: the next run archives it again (the same key) and deletes it.
    for (const { item, failure } of undeleted)
      short.push({ chosen: item, why: `archived, but the DLQ copy could not be deleted: ${failure.code}`, acted: true });
    return short;
  };
  const signal = o.signal === undefined ? stop.signal : AbortSignal.any([o.signal, stop.signal]);
  const result = await sweepDeadLetters(
    queue,
    {
      dlqUrl: o.dlqUrl,
      limit: o.limit,
      dryRun: o.dryRun,
      signal,
      choose: oldEnough,
    },
    act,
  );
  return { ...result, archived: result.done, notOldEnough, stoppedBy };
}

/** The DLQ's retention against `--older-than` (checkRetention). */
export interface RetentionMargin {
  /** The DLQ's MessageRetentionPeriod, in seconds. */
  readonly retentionSeconds: number;
  /** How long a dead letter stays in the DLQ once it is old enough to archive: a run must come at least this often. */
  readonly marginSeconds: number;
  /** Less than a day: one missed daily run, and SQS deletes what it would have archived. */
  readonly tight: boolean;
}

/**
 * Read the DLQ's MessageRetentionPeriod and refuse an age that is not below it (a ConfigError
 * naming both): SQS would delete each message before it is old enough to archive.
 */
export async function checkRetention(
  admin: Pick<QueueAdmin, 'settings'>,
  dlqUrl: string,
  olderThanSeconds: number,
): Promise<RetentionMargin> {
  const retentionSeconds = (await admin.settings(dlqUrl)).messageRetentionSeconds ?? SQS_DEFAULT_RETENTION_SECONDS;
  const marginSeconds = retentionSeconds - olderThanSeconds;
  if (marginSeconds <= 0)
    throw new ConfigError(
      `--older-than ${ageText(olderThanSeconds)} (${olderThanSeconds} s) is not below the DLQ's MessageRetentionPeriod of ${ageText(retentionSeconds)} (${retentionSeconds} s, ${dlqUrl}): SQS deletes each dead letter before it is that old. Give an age under ${ageText(retentionSeconds)}, with a margin longer than the time between runs`,
    );
  return { retentionSeconds, marginSeconds, tight: marginSeconds < 86_400 };
}

/** What SQS keeps a message for when its queue does not say (it always does). */
const SQS_DEFAULT_RETENTION_SECONDS = 345_600;

/** Seconds as whole units, the way `--older-than` takes them: 1209600 → '14d', 5400 → '1h30m'. */
export function ageText(seconds: number): string {
  const units: [string, number][] = [
    ['d', 86_400],
    ['h', 3_600],
    ['m', 60],
    ['s', 1],
  ];
  let rest = seconds;
  let text = '';
  for (const [unit, size] of units) {
    if (rest >= size) text += `${Math.floor(rest / size)}${unit}`;
    rest %= size;
  }
  return text === '' ? '0s' : text;
}

function errorText(error: unknown): string {
  if (error instanceof SqsJobsError) return error.message;
  if (!(error instanceof Error)) return String(error);
  return error.name !== 'Error' && !error.message.includes(error.name) ? `${error.name}: ${error.message}` : error.message;
}
