import type { JobRegistry } from '../../core/job-registry.js';
import type { Lease } from '../hold/lease.js';
import { batchJobOf } from '../reading.js';
import { readOnce } from '../run/read.js';

/** What the last receives said of each queue, for batch jobs: whether it has more now, and whether it carries only batch jobs. */
export class BatchFeeds {
  /** Queues whose last receive brought fewer messages than asked: nothing more is waiting there now. */
  readonly #drained = new Set<string>();
  /** Queues whose last receive that brought anything brought batch jobs' messages only. */
  readonly #feeding = new Set<string>();

  readonly #jobs: JobRegistry;

  constructor(jobs: JobRegistry) {
    this.#jobs = jobs;
  }

  /** A receive on `queueUrl` asked for `asked` messages and got `leases` (not yet scheduled). */
  received(queueUrl: string, asked: number, leases: readonly Lease[]): void {
    if (leases.length < asked) this.#drained.add(queueUrl);
    else this.#drained.delete(queueUrl);
    if (leases.length === 0) return; // an empty receive says nothing of what the queue carries
    // Only batch jobs' messages: a queue that brings other jobs' too takes turns for handler room.
    if (leases.every((lease) => batchJobOf(readOnce(this.#jobs, lease)) !== undefined)) this.#feeding.add(queueUrl);
    else this.#feeding.delete(queueUrl);
  }

  /** Whether `queueUrl`'s last receive brought fewer than it asked for. */
  drained(queueUrl: string): boolean {
    return this.#drained.has(queueUrl);
  }

  /** Whether `queueUrl`'s last receive that brought anything brought batch jobs' messages only. */
  feeds(queueUrl: string): boolean {
    return this.#feeding.has(queueUrl);
  }
}
