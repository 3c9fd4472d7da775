/** How a GroupCommit groups its items and how many calls it keeps in flight. */
interface GroupCommitOptions<T> {
  /** Items in one call at most (the store's batch limit). */
  readonly maxItems: number;
  /** Calls in flight at once; an item that finds them all busy waits for the next group. */
  readonly maxInFlight: number;
  /** Items with the same key never share a call (a batch may not touch one record twice): a later one waits for the next. */
  readonly keyOf: (item: T) => string;
  /** Called when a call returns and nothing is left to send or out (e.g. to forget a per-key GroupCommit). */
  readonly onIdle?: () => void;
}

interface Waiting<T, R> {
  readonly item: T;
  readonly resolve: (r: R) => void;
  readonly reject: (e: unknown) => void;
}

/**
 * Group commit: an item goes out at once in a call of its own while fewer than `maxInFlight`
 * calls are out; items that come while they are all out wait, and go together in the next call
 * (up to `maxItems`) as soon as one returns. An idle store sees one call per item and no added
 * wait; a busy one sees full batches. `commit` answers one result per item, in order; when it
 * throws, every item of that call is rejected with the error.
 */
export class GroupCommit<T, R> {
  readonly #commit: (items: T[]) => Promise<R[]>;
  readonly #o: GroupCommitOptions<T>;
  /** Items not sent yet, oldest first, from #head on (taken items are not shifted out one by one). */
  #waiting: (Waiting<T, R> | undefined)[] = [];
  #head = 0;
  #inFlight = 0;

  constructor(commit: (items: T[]) => Promise<R[]>, options: GroupCommitOptions<T>) {
    this.#commit = commit;
    this.#o = options;
  }

  /** Nothing waits and no call is out. */
  get idle(): boolean {
    return this.#inFlight === 0 && this.#waiting.length === this.#head;
  }

  add(item: T): Promise<R> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ item, resolve, reject });
      this.#next();
    });
  }

  /** Send what waits, while calls are free. */
  #next(): void {
    while (this.#inFlight < this.#o.maxInFlight && this.#waiting.length > this.#head) {
      const group = this.#take();
      this.#inFlight++;
      this.#send(group).finally(() => {
        this.#inFlight--;
        this.#next();
        if (this.idle) this.#o.onIdle?.();
      });
    }
  }

  /**
   * The next call's items: the longest waiting first, up to maxItems, one per key. An item whose key
   * is in the group already stays, ahead of those not looked at. Costs what it looks at, however
   * many wait (a slow store can leave thousands waiting).
   */
  #take(): Waiting<T, R>[] {
    const waiting = this.#waiting;
    const group: Waiting<T, R>[] = [];
    const skipped: Waiting<T, R>[] = [];
    const keys = new Set<string>();
    const from = this.#head;
    let i = from;
    for (; i < waiting.length && group.length < this.#o.maxItems; i++) {
      const w = waiting[i]!;
      const key = this.#o.keyOf(w.item);
      if (keys.has(key)) {
        skipped.push(w);
        continue;
      }
      keys.add(key);
      group.push(w);
    }
    // The skipped go back just before the first item not looked at, in their order; the slots
    // before them let go of what was taken.
    this.#head = i - skipped.length;
    waiting.fill(undefined, from, this.#head);
    for (const [k, w] of skipped.entries()) waiting[this.#head + k] = w;
    if (this.#head === waiting.length) {
      this.#waiting = [];
      this.#head = 0;
    } else if (this.#head > 1_024 && this.#head * 2 > waiting.length) {
      this.#waiting = waiting.slice(this.#head);
      this.#head = 0;
    }
    return group;
  }

  async #send(group: Waiting<T, R>[]): Promise<void> {
    try {
      const results = await this.#commit(group.map((w) => w.item));
      for (const [i, w] of group.entries()) w.resolve(results[i]!);
    } catch (error) {
      for (const w of group) w.reject(error);
    }
  }
}
