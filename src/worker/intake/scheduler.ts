import type { Lease } from '../hold/lease.js';
import type { TierPick } from '../config.js';
import { type Lane, LanePicker } from './lanes.js';
import { isPauseTag, Waiters } from './waiters.js';

/** A queue as the scheduler sees it. */
export interface ScheduledQueue extends Lane {
  readonly url: string;
  readonly fifo: boolean;
}

interface QueueBuffer<Q> {
  readonly queue: Q;
  readonly buffer: Lease[];
  /** FIFO: message groups with a job running now; the next message of such a group waits. */
  readonly activeGroups: Set<string>;
}

/**
 * Holds received, unstarted messages and answers "which runs next". Queues are taken as their
 * lanes' tiers and weights say (see LanePicker). On a FIFO queue, one message per message group runs at a time, in
 * the order received; different groups run side by side. A group whose job is handed back (retry,
 * hand-back, lost lease) is blocked: its buffered messages must go back to SQS behind it, which
 * `concluded` returns for the caller to hand back.
 */
export class Scheduler<Q extends ScheduledQueue> {
  readonly #buffers: QueueBuffer<Q>[];
  readonly #byUrl = new Map<string, QueueBuffer<Q>>();
  /** FIFO messages whose earlier group message was lost while buffered: to be handed back behind it. */
  #orphans: Lease[] = [];
  readonly #picker: LanePicker<Q>;
  /** Buffered messages waiting for a permit or a rate slot. */
  readonly #waiters = new Waiters();

  constructor(queues: readonly Q[], pick?: TierPick) {
    this.#picker = new LanePicker(pick);
    this.#buffers = queues.map((queue) => ({ queue, buffer: [], activeGroups: new Set() }));
    for (const s of this.#buffers) this.#byUrl.set(s.queue.url, s);
  }

  get size(): number {
    return this.#buffers.reduce((n, s) => n + s.buffer.length, 0);
  }

  /** Messages waiting here for a permit of their tenant or their rate slot (see wait). */
  get waiting(): number {
    return this.#waiters.count();
  }

  /** Messages waiting here (see wait): of one queue, or of all (undefined); `paused`: only those waiting for a pause to end. */
  waitingOf(queueUrl: string | undefined, paused = false): number {
    return this.#waiters.count((l, tag) => (queueUrl === undefined || l.message.queueUrl === queueUrl) && (!paused || isPauseTag(tag)));
  }

  /** Messages waiting here for a permit of `tenant`. */
  waitingFor(tenant: string): number {
    return this.#waiters.count((_l, whose) => whose === tenant);
  }

  /**
   * Buffered messages that could start now: not waiting (for a permit, a rate slot, a FIFO retry's
   * delay) and, on FIFO, the first of each group with nothing running.
   */
  startable(now = Date.now()): number {
    let n = 0;
    for (const s of this.#buffers) {
      if (s.buffer.length === 0) continue;
      if (!s.queue.fifo) {
        for (const l of s.buffer) if (l.notBefore <= now && !l.lost) n++;
        continue;
      }
      const seen = new Set<string>();
      for (const l of s.buffer) {
        const group = this.#group(s, l) ?? '';
        if (s.activeGroups.has(group) || seen.has(group)) continue;
        seen.add(group);
        if (l.notBefore <= now && !l.lost) n++;
      }
    }
    return n;
  }

  /** Whether `lease` has waited here, for a permit or a rate slot (it keeps its place; events tell its first wait only). */
  hasWaited(lease: Lease): boolean {
    return this.#waiters.hasWaited(lease);
  }

  /** Messages of one queue waiting to start (`withWaiting` false: not those waiting for a permit or a rate slot). */
  bufferedOf(queueUrl: string, withWaiting = true): number {
    const buffer = this.#bufferOf(queueUrl).buffer;
    if (withWaiting || !this.#waiters.any) return buffer.length;
    let n = 0;
    for (const l of buffer) if (!this.#waiters.has(l)) n++;
    return n;
  }

  /** Messages of one queue that start before one received now: buffered, not waiting (for a permit, a rate slot), not lost. */
  aheadOf(queueUrl: string): number {
    let n = 0;
    for (const l of this.#bufferOf(queueUrl).buffer) if (!l.lost && !this.#waiters.has(l)) n++;
    return n;
  }

  add(queueUrl: string, leases: readonly Lease[]): void {
    this.#bufferOf(queueUrl).buffer.push(...leases);
  }

  /** The next message to start and its queue, or undefined when nothing can start now. */
  next(): { queue: Q; lease: Lease } | undefined {
    for (;;) {
      const ready = this.#buffers.filter((s) => this.#startable(s) !== -1);
      const slot = this.#picker.choose(ready.map((s) => s.queue));
      if (slot === undefined) return undefined;
      const s = this.#bufferOf(slot.url);
      const lease = s.buffer.splice(this.#startable(s), 1)[0]!;
      this.#waiters.delete(lease);
      if (lease.lost) {
        // Its visibility ran out while it waited: it is back in the queue. On FIFO its group's
        // later messages must go back too, or they would run ahead of it.
        const group = this.#group(s, lease);
        if (group !== undefined) {
          const behind = s.buffer.filter((l) => this.#group(s, l) === group);
          s.buffer.splice(0, s.buffer.length, ...s.buffer.filter((l) => !behind.includes(l)));
          this.#orphans.push(...behind);
        }
        continue;
      }
      const group = this.#group(s, lease);
      if (group !== undefined) s.activeGroups.add(group);
      return { queue: s.queue, lease };
    }
  }

  /**
   * A started message has its outcome. When its FIFO group must wait for it to come back
   * (`blocksGroup`), the group's buffered messages are taken out and returned, to be handed back.
   */
  concluded(lease: Lease, blocksGroup: boolean): Lease[] {
    const s = this.#bufferOf(lease.message.queueUrl);
    const group = this.#group(s, lease);
    if (group === undefined) return [];
    s.activeGroups.delete(group);
    if (!blocksGroup) return [];
    const behind = s.buffer.filter((l) => this.#group(s, l) === group);
    if (behind.length > 0) s.buffer.splice(0, s.buffer.length, ...s.buffer.filter((l) => !behind.includes(l)));
    return behind;
  }

  /**
   * FIFO: a started message failed and is retried here after `delayMs` (a new run, under a fresh
   * signal), ahead of the rest of its group, which waits for it: SQS is not asked to order it again (not every server keeps a group
   * blocked behind a message whose visibility was changed).
   */
  retryLater(lease: Lease, delayMs: number, now = Date.now()): void {
    const s = this.#bufferOf(lease.message.queueUrl);
    const group = this.#group(s, lease);
    if (group !== undefined) s.activeGroups.delete(group);
    lease.retries++;
    lease.newRun();
    lease.notBefore = now + delayMs;
    s.buffer.unshift(lease);
  }

  /**
   * A message whose tenant is at its cap (`tag`: the tenant), whose job is at its rate limit, or
   * that is paused (`tag`: pauseTag), waits here, first of its queue, until `notBefore`, a permit of
   * its tenant frees here (permitFreed) or its pause ends (resumed); it holds no handler slot
   * meanwhile. On FIFO its group waits with it.
   */
  wait(lease: Lease, tag: string | undefined, notBefore: number): void {
    const s = this.#bufferOf(lease.message.queueUrl);
    const group = this.#group(s, lease);
    if (group !== undefined) s.activeGroups.delete(group);
    this.#waiters.add(lease, tag);
    lease.notBefore = notBefore;
    s.buffer.unshift(lease);
  }

  /**
   * A permit of `tenant` was given back here: the message that has waited for one longest (of those
   * not woken already and not lost) may start now. False when none waits.
   */
  permitFreed(tenant: string): boolean {
    return this.#waiters.permitFreed(tenant);
  }

  /** A pause ended: the messages waiting for it (their tag's key, as `ended` says) may start now. False when none waits. */
  resumed(ended: (key: string) => boolean): boolean {
    return this.#waiters.resumed(ended);
  }

  /** A message `next` gave that cannot start now after all (no free slot for its kind): first again, its FIFO group free. */
  putBack(lease: Lease): void {
    const s = this.#bufferOf(lease.message.queueUrl);
    const group = this.#group(s, lease);
    if (group !== undefined) s.activeGroups.delete(group);
    s.buffer.unshift(lease);
  }

  /** The orphans `next` set aside since the last call (see #orphans). */
  takeOrphans(): Lease[] {
    const out = this.#orphans;
    this.#orphans = [];
    return out;
  }

  /** Take every buffered message out (shutdown). */
  drain(): Lease[] {
    this.#waiters.clear();
    return this.#buffers.flatMap((s) => s.buffer.splice(0));
  }

  /** Index of the first message that may start, or -1. */
  #startable(s: QueueBuffer<Q>): number {
    if (!s.queue.fifo) {
      if (s.buffer.length === 0) return -1;
      if (s.buffer[0]!.notBefore === 0) return 0;
      const now = Date.now();
      // Past those waiting for a permit or a rate slot; a lost one is taken out (next() drops it).
      return s.buffer.findIndex((l) => l.notBefore <= now || l.lost);
    }
    const now = Date.now();
    const waiting = new Set<string>();
    for (let i = 0; i < s.buffer.length; i++) {
      const lease = s.buffer[i]!;
      const group = this.#group(s, lease) ?? '';
      if (s.activeGroups.has(group) || waiting.has(group)) continue;
      if (lease.notBefore > now) {
        waiting.add(group); // its group waits with it
        continue;
      }
      return i;
    }
    return -1;
  }

  #group(s: QueueBuffer<Q>, lease: Lease): string | undefined {
    return s.queue.fifo ? (lease.message.groupId ?? '') : undefined;
  }

  #bufferOf(queueUrl: string): QueueBuffer<Q> {
    const s = this.#byUrl.get(queueUrl);
    if (s === undefined) throw new Error(`no queue ${queueUrl} in the scheduler`);
    return s;
  }
}
