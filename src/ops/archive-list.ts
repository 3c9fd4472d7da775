import type { ReceivedMessage } from '../core/message.js';
import type { ArchiveStore } from '../ports/archive.js';

/** What listing and reading the archive takes of it. */
type ArchiveReader = Pick<ArchiveStore, 'list' | 'get'>;
import { type ArchivedRecord, fromRecord, lettersUnder, marksUnder, messageIdOfKey, replayedKey } from './archive-format.js';
import type { DeadLetter } from './dlq.js';
import { type DeadLetterFilter, isFiltered, matchesFilter } from './dlq-filter.js';
import { attributeTexts, type DeadLetterMessage } from './dlq-scan.js';

/** One record of the archive, read: what the DLQ tools say of it, its body and attributes, and whether a replay sent it back. */
export interface ArchivedLetter extends DeadLetterMessage {
  /** Its object's key. */
  readonly key: string;
  /** When it was archived (ISO-8601). */
  readonly archivedAt: string;
  /** When it was sent to the DLQ (its SentTimestamp, ISO-8601): what `dlq archive --older-than` measured. */
  readonly sentAt: string;
  /** When its job was first sent (ISO-8601). */
  readonly firstSentAt: string;
  /** Whether `dlq replay --from` sent it back already (its mark is there). */
  readonly replayed: boolean;
}

/**
 * A record met while walking the archive: the message it was, why it could not be read, or (when
 * the walk does not read those) that it carries a replay mark.
 */
export type WalkedRecord =
  | {
      readonly key: string;
      readonly m: ReceivedMessage;
      readonly record: ArchivedRecord;
      readonly letter: DeadLetter;
      readonly replayed: boolean;
    }
  | { readonly key: string; readonly unreadable: string }
  | { readonly key: string; readonly marked: true };

/** GETs in flight at once while walking. */
const READS_AT_ONCE = 10;
/** A record larger than this is not read (a dead letter is at most 1 MiB, its record a little more): it is answered unreadable. */
export const MAX_RECORD_BYTES = 2 * 1024 * 1024;

/**
 * Every record under `prefix` in key order (after `startAfter`, a key), read and told apart from
 * those a replay marked, a listing page at a time: one LIST of the records, one (or a few) of the
 * marks in that page's range, and a GET per record, ten at a time. With `skipMarked`, a marked
 * record is not read (no GET): it is answered as `marked`. With `maxReads`, it lists and reads no
 * more records than that. A record over MAX_RECORD_BYTES (by its listed size) is not read. Each
 * answer says whether it is the listing's `last` record.
 */
export async function* walkArchive(
  store: ArchiveReader,
  prefix: string,
  o: { readonly startAfter?: string | undefined; readonly skipMarked?: boolean; readonly maxReads?: number } = {},
): AsyncGenerator<WalkedRecord & { readonly last: boolean }> {
  const { startAfter } = o;
  let left = o.maxReads ?? Number.POSITIVE_INFINITY;
  let next: string | undefined;
  do {
    // One key past what may be read: so that the last one read can tell whether it is the last.
    const max = Number.isFinite(left) ? { max: Math.min(1_000, left + 1) } : {};
    const page = await store.list(lettersUnder(prefix), {
      ...(next === undefined ? (startAfter === undefined ? {} : { startAfter }) : { next }),
      ...max,
    });
    next = page.next;
    const ids = page.objects.flatMap((o) => {
      const id = messageIdOfKey(o.key);
      return id === undefined ? [] : [{ key: o.key, id, size: o.size }];
    });
    if (ids.length === 0) continue;
    const marked = await replayedBetween(store, prefix, ids[0]!.id, ids.at(-1)!.id);
    for (let i = 0; i < ids.length && left > 0; ) {
      const batch = ids.slice(i, i + Math.min(READS_AT_ONCE, left));
      i += batch.length;
      left -= batch.length;
      const read = await Promise.all(
        batch.map(({ key, id, size }) =>
          o.skipMarked && marked.has(id)
            ? { key, marked: true as const }
            : size > MAX_RECORD_BYTES
              ? { key, unreadable: `${size} bytes: larger than a dead letter's record (${MAX_RECORD_BYTES})` }
              : readOne(store, key, marked.has(id)),
        ),
      );
      const lastOfAll = next === undefined && i >= ids.length;
      for (const [n, r] of read.entries()) if (r !== undefined) yield { ...r, last: lastOfAll && n === read.length - 1 };
    }
  } while (next !== undefined && left > 0);
}

async function readOne(store: ArchiveReader, key: string, replayed: boolean): Promise<WalkedRecord | undefined> {
  const text = await store.get(key);
  if (text === undefined) return undefined; // deleted since the listing
  try {
    return { key, ...fromRecord(text), replayed };
  } catch (error) {
    return { key, unreadable: `not a dead letter record: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}` };
  }
}

/** The message ids from `first` to `last` (in key order) that carry a replay's mark. */
async function replayedBetween(store: ArchiveReader, prefix: string, first: string, last: string): Promise<Set<string>> {
  const marked = new Set<string>();
  const end = replayedKey(prefix, last);
  // The mark's key without `.json` sorts just before it, and after the mark of any id before `first`.
  let o: { startAfter?: string; next?: string } = { startAfter: replayedKey(prefix, first).replace(/\.json$/, '') };
  for (;;) {
    const page = await store.list(marksUnder(prefix), o);
    for (const { key } of page.objects) {
      if (key > end) return marked;
      const id = messageIdOfKey(key);
      if (id !== undefined) marked.add(id);
    }
    if (page.next === undefined) return marked;
    o = { next: page.next };
  }
}

/**
 * Up to `limit` (default 100) archived dead letters under `prefix`, those the filter matches (its
 * ages from when each was dead-lettered, as in the DLQ), in key order, after the key `after`;
 * `next` is the key to pass as `after` for the next page (undefined: the archive has no more).
 * With `maxScan`, it reads that many records at most (a GET each) and stops there, `next` the last
 * one read: a narrow filter over a large archive answers a page at a time. `scanned` counts those
 * read, `unreadable` those it left out (not a dead letter's record, or too large). For the dashboard's archived view.
 */
export async function listArchived(
  store: ArchiveReader,
  prefix: string,
  o: { readonly limit?: number; readonly after?: string; readonly filter?: DeadLetterFilter; readonly maxScan?: number } = {},
): Promise<{ letters: ArchivedLetter[]; next: string | undefined; scanned: number; unreadable: number }> {
  const limit = o.limit ?? 100;
  const now = Date.now();
  const letters: ArchivedLetter[] = [];
  let scanned = 0;
  let unreadable = 0;
  // Unfiltered, every record read is shown: a page reads its limit and no more.
  const maxReads = Math.min(o.maxScan ?? Number.POSITIVE_INFINITY, isFiltered(o.filter ?? {}) ? Number.POSITIVE_INFINITY : limit);
  for await (const r of walkArchive(store, prefix, { startAfter: o.after, maxReads })) {
    scanned++;
    if ('unreadable' in r) unreadable++;
    if ('letter' in r && matchesFilter(r.letter, o.filter ?? {}, now)) {
      letters.push({
        key: r.key,
        letter: r.letter,
        body: r.m.body,
        attributes: attributeTexts(r.m),
        archivedAt: r.record.archivedAt,
        sentAt: r.record.sentAt,
        firstSentAt: r.record.firstSentAt,
        replayed: r.replayed,
      });
    }
    if (r.last) break;
    if (letters.length >= limit || scanned >= maxReads) return { letters, next: r.key, scanned, unreadable };
  }
  return { letters, next: undefined, scanned, unreadable };
}
