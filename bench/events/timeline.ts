/**
 * When each event was sent and when each of its jobs' handlers began, on one clock
 * (performance.now(): the producer and the workers share this process).
 */
export class Timeline {
  /** seq → when the publish() / enqueue calls began, and when they resolved. */
  readonly #sent = new Map<number, { start: number; end?: number }>();
  /** Per job (by index): seq → when its handler began (the first run; later ones are duplicates). */
  readonly #ran: Map<number, number>[];
  #runs = 0;
  duplicates = 0;
  sendErrors = 0;

  constructor(jobs: number) {
    this.#ran = Array.from({ length: jobs }, () => new Map<number, number>());
  }

  began(seq: number): void {
    this.#sent.set(seq, { start: performance.now() });
  }

  resolved(seq: number): void {
    const s = this.#sent.get(seq);
    if (s !== undefined) s.end = performance.now();
  }

  /** A handler of job `job` began for event `seq`. */
  ran(job: number, seq: number): void {
    const now = performance.now();
    const runs = this.#ran[job];
    if (runs === undefined) throw new Error(`no job ${job}`);
    if (runs.has(seq)) {
      this.duplicates++;
      return;
    }
    runs.set(seq, now);
    this.#runs++;
  }

  /** Handler runs recorded (first runs only) for events from..to-1. */
  runsBetween(from: number, to: number): number {
    let n = 0;
    for (const runs of this.#ran) for (const seq of runs.keys()) if (seq >= from && seq < to) n++;
    return n;
  }

  get runs(): number {
    return this.#runs;
  }

  /** Latencies (ms) of events from..to-1: each job's, each event's last job's, and the send call's. */
  latencies(from: number, to: number): { perJob: number[]; perEvent: number[]; call: number[]; missing: number } {
    const perJob: number[] = [];
    const perEvent: number[] = [];
    const call: number[] = [];
    let missing = 0;
    for (let seq = from; seq < to; seq++) {
      const sent = this.#sent.get(seq);
      if (sent === undefined) {
        missing += this.#ran.length;
        continue;
      }
      if (sent.end !== undefined) call.push(sent.end - sent.start);
      let last = 0;
      let complete = true;
      for (const runs of this.#ran) {
        const at = runs.get(seq);
        if (at === undefined) {
          missing++;
          complete = false;
          continue;
        }
        perJob.push(at - sent.start);
        last = Math.max(last, at - sent.start);
      }
      if (complete) perEvent.push(last);
    }
    return { perJob, perEvent, call, missing };
  }
}

/** Nearest-rank percentile (p in 0..100) of the values; NaN when there are none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1] ?? Number.NaN;
}
