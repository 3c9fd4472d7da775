import { createHash } from 'node:crypto';
import { z } from 'zod';
import { implementing } from '../../config/env.js';
import type { DrainMeter } from '../../ports/drain-meter.js';
import type { QueueCounts } from '../../ports/queue-admin.js';
import { type CapacityBasis, type EstimatePorts, QueueEstimate } from './estimate.js';
import { AdmissionGate } from './gate.js';

/**
 * The producer's `admission` option: refuse new jobs (QueueFullError, HTTP 429) once a queue's backlog
 * reaches 90% of the workers' drain capacity × `slaSeconds`. It needs the workers' drain counts: `drains`,
 * else the producer's `memcached` (or SQS_JOBS_MEMCACHED).
 */
export const admissionOptionsSchema = z
  .object({
    /** The most a job should wait to start, in seconds: the high-water mark is the drain capacity × this. */
    slaSeconds: z.number().positive('must be > 0').max(86_400, 'must be <= 86400'),
    /** How often the queue's counts and the drain count are read (one SQS call and one memcached read). */
    sampleMs: z.number().int('must be a whole number').min(250, 'must be 250-60000').max(60_000, 'must be 250-60000').default(1_000),
    /** Over how long the drain rate is measured. */
    windowSeconds: z.number().min(1, 'must be 1-300').max(300, 'must be 1-300').default(5),
    /** How long after its time a refused request's turn is kept for it. */
    graceMs: z.number().int('must be a whole number').min(0).max(60_000).default(2_000),
    /** The backlog admitted before any drain capacity is known (none kept, none drained yet). */
    firstMark: z.number().int('must be a whole number').min(1, 'must be >= 1').default(10),
    /** The longest Retry-After told; a request that would wait longer is told this and keeps no turn. */
    maxRetryAfterSeconds: z.number().int('must be a whole number').min(1, 'must be 1-3600').max(3_600, 'must be 1-3600').default(30),
    /** Where the workers count what they drain and hold unstarted; default: the producer's memcached (its `memcached` option or SQS_JOBS_MEMCACHED). */
    drains: implementing<DrainMeter>('DrainMeter', ['add', 'read', 'addHeld', 'readHeld', 'keepCapacity', 'keptCapacity']).optional(),
    /** The queue's counts; default: SQS's GetQueueAttributes on the producer's client. */
    counts: z.custom<(queueUrl: string) => Promise<QueueCounts>>((v) => typeof v === 'function', 'must be a function').optional(),
  })
  .strict();

type Settings = z.output<typeof admissionOptionsSchema>;

/** Admission's view of one queue (`producer.admissionState(queueUrl)`). */
export interface AdmissionState {
  /** Messages not yet started (visible, delayed, and held unstarted by the workers), projected from the last sample to now. */
  readonly backlog: number;
  /** The workers' drain capacity (jobs/s) as known (`basis`); undefined with none known yet. */
  readonly drainPerSecond: number | undefined;
  /** Where drainPerSecond comes from: measured here, kept by a producer before, drained as seen, or none yet (CapacityBasis). */
  readonly basis: CapacityBasis;
  /** drainPerSecond × slaSeconds (at least `firstMark` until measured): no admission takes the backlog above it. */
  readonly highWaterMark: number;
  /** 85% of the mark: new requests are refused above it (the rest is room for those back on their turn). */
  readonly fillLine: number;
  /** Messages whose turn is kept for refused requests told to come back. */
  readonly turnsHeld: number;
}

/** New requests fill the backlog to 85% of the mark; the last 15% is room for requests back on their turn (and for the workers' pace, which wanders about the mean wait). */
const HEADROOM = 0.15;
/** How often a queue is sampled at most until its capacity is measured. */
const WARMUP_SAMPLE_MS = 250;

/**
 * Admission for a producer: per destination queue, an estimate sampled on a timer (started on the
 * queue's first enqueue) and a gate that admits or throws QueueFullError. Enqueue itself makes
 * no call for it: it reads the estimate in memory.
 */
export class Admission {
  readonly #s: Settings;
  readonly #ports: EstimatePorts;
  readonly #queues = new Map<string, { estimate: QueueEstimate; gate: AdmissionGate; timer: NodeJS.Timeout | undefined }>();
  readonly #now: () => number;

  constructor(settings: Settings, ports: EstimatePorts, now: () => number = Date.now) {
    this.#s = settings;
    this.#ports = ports;
    this.#now = now;
  }

  /**
   * Admit `count` messages to `queueUrl` under `key` (see admissionKey), or throw QueueFullError.
   * Admitted ones count in the backlog at once; say what became of them with sent().
   */
  admit(queueUrl: string, key: string, count: number): void {
    const q = this.#queue(queueUrl);
    const now = this.#now();
    q.gate.admit(key, count, q.estimate.view(now), now);
    q.estimate.sending(count);
  }

  /**
   * Admit every message, all or none, per destination queue (the `admission` option): throws
   * QueueFullError before anything is sent. Several messages are one request (the first one's key).
   */
  admitAll(messages: readonly { readonly queueUrl: string; readonly admissionKey: string | undefined }[]): void {
    const byQueue = new Map<string, { key: string; count: number }>();
    for (const m of messages) {
      const q = byQueue.get(m.queueUrl);
      if (q === undefined) byQueue.set(m.queueUrl, { key: m.admissionKey!, count: 1 });
      else q.count++;
    }
    const admitted: [string, number][] = [];
    try {
      for (const [queueUrl, { key, count }] of byQueue) {
        this.admit(queueUrl, key, count);
        admitted.push([queueUrl, count]);
      }
    } catch (error) {
      for (const [queueUrl, count] of admitted) this.sent(queueUrl, 0, count); // none of them goes
      throw error;
    }
  }

  /** What admission sees for `queueUrl` now; undefined before its first enqueue there. */
  state(queueUrl: string): AdmissionState | undefined {
    const q = this.#queues.get(queueUrl);
    if (q === undefined) return undefined;
    const now = this.#now();
    const view = q.estimate.view(now);
    q.gate.prune(now);
    const highWaterMark = q.gate.markOf(view);
    return {
      backlog: view.backlog,
      drainPerSecond: view.capacity,
      basis: view.basis,
      highWaterMark,
      fillLine: highWaterMark * (1 - HEADROOM),
      turnsHeld: q.gate.held,
    };
  }

  /** Of the messages admitted to `queueUrl`, `count` were sent (counted until the next sample sees them) and `failed` were not. */
  sent(queueUrl: string, count: number, failed = 0): void {
    this.#queues.get(queueUrl)?.estimate.sent(count, failed);
  }

  /** Take a sample of every queue now (tests; the timers do this every sampleMs). */
  async sample(): Promise<void> {
    await Promise.all([...this.#queues.values()].map((q) => q.estimate.sample(this.#now)));
  }

  close(): void {
    for (const q of this.#queues.values()) clearTimeout(q.timer);
    this.#queues.clear();
  }

  #queue(queueUrl: string) {
    let q = this.#queues.get(queueUrl);
    if (q === undefined) {
      const estimate = new QueueEstimate(this.#ports, queueUrl, this.#s.windowSeconds * 1000);
      const gate = new AdmissionGate({
        slaSeconds: this.#s.slaSeconds,
        graceMs: this.#s.graceMs,
        headroom: HEADROOM,
        firstMark: this.#s.firstMark,
        maxRetryAfterMs: this.#s.maxRetryAfterSeconds * 1000,
      });
      q = { estimate, gate, timer: undefined };
      this.#queues.set(queueUrl, q);
      this.#sampleNow(q);
    }
    return q;
  }

  /**
   * Sample `q` now and again after `sampleMs`; every WARMUP_SAMPLE_MS at most while its capacity is
   * not measured (the backlog admitted under the first mark is read that much sooner, so the
   * workers are not left waiting for a sample to make room).
   */
  #sampleNow(q: { estimate: QueueEstimate; timer: NodeJS.Timeout | undefined }): void {
    void q.estimate.sample(this.#now);
    const every = q.estimate.view(this.#now()).basis === 'measured' ? this.#s.sampleMs : Math.min(WARMUP_SAMPLE_MS, this.#s.sampleMs);
    q.timer = setTimeout(() => this.#sampleNow(q), every);
    q.timer.unref();
  }
}

/**
 * What makes a request "the same one, back": the job id it names, else its job, args and tenant.
 * A refused request that comes back after Retry-After finds its turn kept under this key.
 */
export function admissionKey(jobName: string, args: unknown, tenant: string | undefined, jobId: string | undefined): string {
  if (jobId !== undefined) return `id:${jobId}`;
  return createHash('sha256')
    .update(`${jobName}\u0000${tenant ?? ''}\u0000${JSON.stringify(args)}`)
    .digest('base64url');
}
