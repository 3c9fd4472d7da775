import type { ReceivedMessage } from '../core/message.js';
import type { ArchiveStore } from '../ports/archive.js';
import { type ArchivedRecord, fromRecord, lettersUnder, marksUnder, messageIdOfKey, replayedKey } from './archive-format.js';
import type { DeadLetter } from './dlq.js';
import { type DeadLetterFilter, matchesFilter } from './dlq-filter.js';

/** One record of the archive, read: what the DLQ tools say of it, and whether a replay sent it back. */
export interface ArchivedLetter {
  /** Its object's key. */
  readonly key: string;
  readonly letter: DeadLetter;
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

/**
 * Every record under `prefix` in key order (after `startAfter`, a key), read and told apart from
 * those a replay marked, a listing page at a time: one LIST of the records, one (or a few) of the
 * marks in that page's range, and a GET per record, ten at a time. With `skipMarked`, a marked
 * record is not read (no GET): it is answered as `marked`.
 */
export async function* walkArchive(
  store: ArchiveStore,
  prefix: string,
  o: { readonly startAfter?: string | undefined; readonly skipMarked?: boolean } = {},
): AsyncGenerator<WalkedRecord> {
  const { startAfter } = o;
  let next: string | undefined;
  do {
    const page = await store.list(lettersUnder(prefix), {
      ...(next === undefined ? (startAfter === undefined ? {} : { startAfter }) : { next }),
    });
    next = page.next;
    const ids = page.objects.flatMap((o) => {
      const id = messageIdOfKey(o.key);
      return id === undefined ? [] : [{ key: o.key, id }];
    });
    if (ids.length === 0) continue;
    const marked = await replayedBetween(store, prefix, ids[0]!.id, ids.at(-1)!.id);
    for (let i = 0; i < ids.length; i += READS_AT_ONCE) {
      const read = await Promise.all(
        ids
          .slice(i, i + READS_AT_ONCE)
          .map(({ key, id }) => (o.skipMarked && marked.has(id) ? { key, marked: true as const } : readOne(store, key, marked.has(id)))),
      );
      for (const r of read) if (r !== undefined) yield r;
    }
  } while (next !== undefined);
}

async function readOne(store: ArchiveStore, key: string, replayed: boolean): Promise<WalkedRecord | undefined> {
  const text = await store.get(key);
  if (text === undefined) return undefined; // deleted since the listing
  try {
    return { key, ...fromRecord(text), replayed };
  } catch (error) {
    return { key, unreadable: `not a dead letter record: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}` };
  }
}

/** The message ids from `first` to `last` (in key order) that carry a replay's mark. */
async function replayedBetween(store: ArchiveStore, prefix: string, first: string, last: string): Promise<Set<string>> {
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
 * For the dashboard's archived view and `dlq list`'s like; records it cannot read are left out.
 */
export async function listArchived(
  store: ArchiveStore,
  prefix: string,
  o: { readonly limit?: number; readonly after?: string; readonly filter?: DeadLetterFilter } = {},
): Promise<{ letters: ArchivedLetter[]; next: string | undefined }> {
  const limit = o.limit ?? 100;
  const now = Date.now();
  const letters: ArchivedLetter[] = [];
  for await (const r of walkArchive(store, prefix, { startAfter: o.after })) {
    if (!('letter' in r) || !matchesFilter(r.letter, o.filter ?? {}, now)) continue;
    letters.push({
      key: r.key,
      letter: r.letter,
      archivedAt: r.record.archivedAt,
      sentAt: r.record.sentAt,
      firstSentAt: r.record.firstSentAt,
      replayed: r.replayed,
    });
    if (letters.length >= limit) return { letters, next: r.key };
  }
  return { letters, next: undefined };
}
