/**
 * The archive port: where dead letters are kept once they leave the DLQ (`sqs-jobs dlq archive`),
 * and read back from (`dlq replay --from`, listArchived). Four calls on an object store, in
 * sqs-jobs' words; src/adapters/s3-archive.ts implements them over S3, bound to one bucket and its
 * encryption setting. Keys are the whole object key (the caller adds its prefix).
 */

/** One object the archive lists. */
export interface ArchivedObject {
  readonly key: string;
  /** Its size in bytes. */
  readonly size: number;
}

/** One page of a listing, in key order, and where the next one starts (undefined: this is the last). */
export interface ArchivePage {
  readonly objects: ArchivedObject[];
  readonly next: string | undefined;
}

/**
 * The archive port (see above); S3Archive implements it. Errors reject with an SqsJobsError that
 * names the bucket and the key or prefix; `get` answers undefined for a missing key.
 */
export interface ArchiveStore {
  /** Resolves when the archive exists and can be reached (S3: HeadBucket); rejects saying what is wrong. */
  check(): Promise<void>;
  /**
   * Write `body` at `key`, replacing what is there; resolves only once the store has acknowledged
   * it as stored (for S3: PutObject answered 200, after which a read sees it). Callers delete
   * the source of what they archive only after this resolves.
   */
  put(key: string, body: string): Promise<void>;
  /**
   * The keys under `prefix`, in key order, a page at a time (at most `max`, default the store's
   * page size): those after `startAfter` (a key, or any string), or from the page `next` names.
   */
  list(prefix: string, o?: { readonly startAfter?: string; readonly next?: string; readonly max?: number }): Promise<ArchivePage>;
  /** The object at `key` as text, or undefined when there is none. */
  get(key: string): Promise<string | undefined>;
}
