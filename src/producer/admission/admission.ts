import { createHash } from 'node:crypto';
import { z } from 'zod';
import { implementing } from '../../config/env.js';
import type { DrainMeter } from '../../ports/drain-meter.js';
import type { QueueCounts } from '../../ports/queue-admin.js';
import { type EstimatePorts, QueueEstimate } from './estimate.js';
import { AdmissionGate } from './gate.js';

/** The producer's `admission` option. */
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
    /** Where the workers count what they drain and hold unstarted; default: the producer's memcached (its `memcached` option or SQS_JOBS_MEMCACHED). */
    drains: implementing<DrainMeter>('DrainMeter', ['add', 'read', 'addHeld', 'readHeld']).optional(),
    /** The queue's counts; default: SQS's GetQueueAttributes on the producer's client. */
    counts: z.custom<(queueUrl: string) => Promise<QueueCounts>>((v) => typeof v === 'function', 'must be a function').optional(),
  })
  .strict();

/**
 * The producer's `admission` option: refuse new jobs (QueueFullError, HTTP 429) once a queue's backlog
 * reaches 90% of the workers' drain capacity × `slaSeconds`. It needs the workers' drain counts: `drains`,
 * else the producer's `memcached` (or SQS_JOBS_MEMCACHED).
 */
export type AdmissionOptions = z.input<typeof admissionOptionsSchema>;
type Settings = z.output<typeof admissionOptionsSchema>;

/** Admission's view of one queue (`producer.admissionState(queueUrl)`). */
export interface AdmissionState {
  /** Messages not yet started (visible, delayed, and held unstarted by the workers), projected from the last sample to now. */
  readonly backlog: number;
  /** The workers' measured drain capacity (jobs/s); undefined until measured (everything is admitted). */
  readonly drainPerSecond: number | undefined;
  /** drainPerSecond × slaSeconds: no admission takes the backlog above it. */
  readonly highWaterMark: number | undefined;
  /** 90% of the mark: new requests are refused above it (the rest is room for those back on their turn). */
  readonly fillLine: number | undefined;
  /** Messages whose turn is kept for refused requests told to come back. */
  readonly turnsHeld: number;
}

/** New requests fill the backlog to 90% of the mark; the last 10% is room for requests back on their turn. */
const HEADROOM = 0.1;

/**
 * Admission for a producer: per destination queue, an estimate sampled on a timer (started on the
 * queue's first enqueue) and a gate that admits or throws QueueFullError. Enqueue itself makes
 * no call for it: it reads the estimate in memory.
 */
export class Admission {
  readonly #s: Settings;
  readonly #ports: EstimatePorts;
  readonly #queues = new Map<string, { estimate: QueueEstimate; gate: AdmissionGate; timer: NodeJS.Timeout }>();
  readonly #now: () => number;

  constructor(settings: Settings, ports: EstimatePorts, now: () => number = Date.now) {
    this.#s = settings;
    this.#ports = ports;
    this.#now = now;
  }

  /** Admit `count` messages to `queueUrl` under `key` (see admissionKey), or throw QueueFullError. */
  admit(queueUrl: string, key: string, count: number): void {
    const q = this.#queue(queueUrl);
    const now = this.#now();
    q.gate.admit(key, count, q.estimate.view(now), now);
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
    for (const [queueUrl, { key, count }] of byQueue) this.admit(queueUrl, key, count);
  }

  /** What admission sees for `queueUrl` now; undefined before its first enqueue there or its first sample. */
  state(queueUrl: string): AdmissionState | undefined {
    const q = this.#queues.get(queueUrl);
    const now = this.#now();
    const view = q?.estimate.view(now);
    if (q === undefined || view === undefined) return undefined;
    q.gate.prune(now);
    const highWaterMark = view.capacity === undefined ? undefined : view.capacity * this.#s.slaSeconds;
    const fillLine = highWaterMark === undefined ? undefined : highWaterMark * (1 - HEADROOM);
    return { backlog: view.backlog, drainPerSecond: view.capacity, highWaterMark, fillLine, turnsHeld: q.gate.held };
  }

  /** They were sent: counted in the backlog until the next sample sees them. */
  sent(queueUrl: string, count: number): void {
    this.#queues.get(queueUrl)?.estimate.sent(count);
  }

  /** Take a sample of every queue now (tests; the timers do this every sampleMs). */
  async sample(): Promise<void> {
    await Promise.all([...this.#queues.values()].map((q) => q.estimate.sample(this.#now)));
  }

  close(): void {
    for (const q of this.#queues.values()) clearInterval(q.timer);
    this.#queues.clear();
  }

  #queue(queueUrl: string) {
    let q = this.#queues.get(queueUrl);
    if (q === undefined) {
      const estimate = new QueueEstimate(this.#ports, queueUrl, this.#s.windowSeconds * 1000);
      const timer = setInterval(() => void estimate.sample(this.#now), this.#s.sampleMs);
      timer.unref();
      void estimate.sample(this.#now);
      const gate = new AdmissionGate({ slaSeconds: this.#s.slaSeconds, graceMs: this.#s.graceMs, headroom: HEADROOM });
      q = { estimate, gate, timer };
      this.#queues.set(queueUrl, q);
    }
    return q;
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
