import { z } from 'zod';
import { firstSentAt } from '../core/delivery.js';
import { ConfigError } from '../core/errors.js';
import type { MessageAttribute, ReceivedMessage } from '../core/message.js';
import type { ArchiveStore } from '../ports/archive.js';
import { type DeadLetter, describeDeadLetter } from './dlq.js';

/*
 * What `dlq archive` writes, one JSON object per dead letter, and where:
 *
 *   <prefix>dead-letters/<DLQ message id>.json   the message: body, every attribute, SQS's times
 *                                                and ids, and what the DLQ tools read from it
 *   <prefix>replayed/<DLQ message id>.json       written by `dlq replay --from` (or `dlq replay
 *                                                --archive`) after it sent the message back: a
 *                                                later replay from the archive leaves it
 *
 * Keyed by the DLQ message's id, which SQS keeps for as long as the message is in the DLQ: an
 * archive run that crashed between a write and its delete and is run again meets the same message
 * and writes the same key (the same content, but for archivedAt and the receive count), so a retry
 * is idempotent, and each delete follows its own durable write.
 */

/** The format's name, in every record: a reader refuses what it does not know. */
export const ARCHIVE_FORMAT = 'sqs-jobs/dead-letter@1';

const attributeSchema = z.object({
  DataType: z.string(),
  StringValue: z.string().optional(),
  /** A Binary attribute's bytes, in base64. */
  BinaryValue: z.string().optional(),
});

/** One archived dead letter as stored (JSON). The times are ISO-8601. */
export const archivedRecordSchema = z.object({
  format: z.literal(ARCHIVE_FORMAT),
  archivedAt: z.string(),
  /** The DLQ it was archived from. */
  dlqUrl: z.string(),
  /** The DLQ message's MessageId: the object's key. */
  messageId: z.string().min(1),
  body: z.string(),
  /** Every message attribute (ours: the reason, the error, the source queue; the sender's). */
  attributes: z.record(z.string(), attributeSchema),
  /**
   * The DLQ message's SentTimestamp, from which SQS counts its retention in the DLQ: the age
   * `--older-than` measured. Our worker's DLQ send is a new message (its own time); SQS's redrive
   * keeps a standard queue's original enqueue time and resets a FIFO queue's.
   */
  sentAt: z.string(),
  /** The job's first send (`sqsjobs-first-sent-at`, else sentAt), for people: nothing is chosen by it. */
  firstSentAt: z.string(),
  /** The DLQ message's ApproximateReceiveCount when it was archived. */
  receiveCount: z.number(),
  groupId: z.string().optional(),
  awsTraceHeader: z.string().optional(),
  /** What the DLQ tools read from it (job, job id, reason, error, source queue...), for people and queries; readers derive it again. */
  letter: z.record(z.string(), z.unknown()),
});

/** One archived dead letter as stored. */
export type ArchivedRecord = z.infer<typeof archivedRecordSchema>;

/** Where an archive lives: a bucket and a key prefix ('' or ending in '/'). */
export interface ArchiveLocation {
  readonly bucket: string;
  readonly prefix: string;
}

const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** `s3://bucket[/prefix]` as a location; a ConfigError naming `flag` when it is not one. */
export function parseArchiveUrl(text: string, flag: string): ArchiveLocation {
  const m = /^s3:\/\/([^/]+)(?:\/(.*))?$/.exec(text);
  if (m === null) throw new ConfigError(`${flag}: must be s3://bucket/prefix (got ${JSON.stringify(text)})`);
  const bucket = m[1]!;
  if (!BUCKET.test(bucket))
    throw new ConfigError(`${flag}: ${JSON.stringify(bucket)} is not an S3 bucket name (3-63 lowercase letters, digits, dots, hyphens)`);
  const path = (m[2] ?? '').replace(/^\/+/, '');
  return { bucket, prefix: path === '' || path.endsWith('/') ? path : `${path}/` };
}

/** Where the records are, under an archive's prefix. */
export const lettersUnder = (prefix: string): string => `${prefix}dead-letters/`;
/** Where the marks are, under an archive's prefix. */
export const marksUnder = (prefix: string): string => `${prefix}replayed/`;
/** The key of a dead letter's record. */
export const letterKey = (prefix: string, messageId: string): string => `${lettersUnder(prefix)}${messageId}.json`;
/** The key of the mark a replay leaves beside it. */
export const replayedKey = (prefix: string, messageId: string): string => `${marksUnder(prefix)}${messageId}.json`;
/** The DLQ message id a record's or a mark's key names; undefined for another key. */
export function messageIdOfKey(key: string): string | undefined {
  return /\/?(?:dead-letters|replayed)\/([^/]+)\.json$/.exec(key)?.[1];
}

/**
 * Write the replay mark (`replayedKey`) of each message sent back, all at once: a later `dlq replay
 * --from` leaves it. With `onlyArchived` (the DLQ replay, which sends messages that are mostly not
 * archived), only for those with a record. Answers the ids marked, and those whose mark failed, with why.
 */
export async function markReplayed(
  store: ArchiveStore,
  prefix: string,
  replayId: string,
  sent: readonly { readonly messageId: string; readonly to: string }[],
  onlyArchived = false,
): Promise<{ marked: string[]; failed: Map<string, string> }> {
  const replayedAt = new Date().toISOString();
  const marked: string[] = [];
  const failed = new Map<string, string>();
  await Promise.all(
    sent.map(async ({ messageId, to }) => {
      try {
        const key = letterKey(prefix, messageId);
        if (onlyArchived && (await store.list(key, { max: 1 })).objects[0]?.key !== key) return;
        await store.put(replayedKey(prefix, messageId), JSON.stringify({ replayId, replayedAt, to }));
        marked.push(messageId);
      } catch (error) {
        failed.set(messageId, error instanceof Error ? error.message : String(error));
      }
    }),
  );
  return { marked, failed };
}

const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

/** The record of a received DLQ message (`dlqUrl`: the queue it is in), archived at `now`. */
export function toRecord(m: ReceivedMessage, now: Date = new Date()): ArchivedRecord {
  const attributes = Object.fromEntries(
    Object.entries(m.attributes).map(([name, a]) => [
      name,
      {
        DataType: a.DataType,
        ...(a.StringValue === undefined ? {} : { StringValue: a.StringValue }),
        ...(a.BinaryValue === undefined ? {} : { BinaryValue: base64(a.BinaryValue) }),
      },
    ]),
  );
  return {
    format: ARCHIVE_FORMAT,
    archivedAt: now.toISOString(),
    dlqUrl: m.queueUrl,
    messageId: m.messageId,
    body: m.body,
    attributes,
    sentAt: new Date(m.sentAt).toISOString(),
    firstSentAt: new Date(firstSentAt(m)).toISOString(),
    receiveCount: m.receiveCount,
    ...(m.groupId === undefined ? {} : { groupId: m.groupId }),
    ...(m.awsTraceHeader === undefined ? {} : { awsTraceHeader: m.awsTraceHeader }),
    letter: { ...describeDeadLetter(m) },
  };
}

/**
 * A record read back as the DLQ message it was (no receipt handle: it is in no queue), ready for
 * the replay's send; throws when the text is not a record of this format.
 */
export function fromRecord(text: string): { readonly m: ReceivedMessage; readonly record: ArchivedRecord; readonly letter: DeadLetter } {
  const record = archivedRecordSchema.parse(JSON.parse(text));
  const attributes: Record<string, MessageAttribute> = {};
  for (const [name, a] of Object.entries(record.attributes))
    attributes[name] =
      a.BinaryValue === undefined
        ? { DataType: a.DataType, StringValue: a.StringValue }
        : { DataType: a.DataType, BinaryValue: new Uint8Array(Buffer.from(a.BinaryValue, 'base64')) };
  const m: ReceivedMessage = {
    queueUrl: record.dlqUrl,
    messageId: record.messageId,
    receiptHandle: '',
    body: record.body,
    receiveCount: record.receiveCount,
    sentAt: Date.parse(record.sentAt),
    groupId: record.groupId,
    attributes,
    awsTraceHeader: record.awsTraceHeader,
  };
  return { m, record, letter: describeDeadLetter(m) };
}
