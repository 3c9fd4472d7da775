import type { Worker } from '../src/index.js';

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

const ms = (n: number) => (n >= 10_000 ? `${(n / 1000).toFixed(0)}s` : n >= 1000 ? `${(n / 1000).toFixed(1)}s` : `${Math.round(n)}ms`);

/** Counts what the workers report, for the demo's progress line and summary. */
export class Progress {
  succeeded = 0;
  retried = 0;
  deadLettered = 0;
  duplicates = 0;
  running = 0;
  readonly waits: number[] = [];
  readonly processes: number[] = [];
  readonly deadReasons = new Map<string, number>();
  readonly perJob = new Map<string, { ok: number; failed: number }>();

  watch(worker: Worker): void {
    worker.on('job:start', () => this.running++);
    worker.on('job:succeeded', (e) => {
      this.running--;
      this.succeeded++;
      this.waits.push(e.waitMs);
      this.processes.push(e.processMs);
      this.#job(e.jobName).ok++;
    });
    worker.on('job:failed', (e) => {
      this.running--;
      this.#job(e.jobName).failed++;
      if (e.retryDelayMs !== undefined) this.retried++;
    });
    worker.on('job:dead-lettered', (e) => {
      this.deadLettered++;
      this.deadReasons.set(e.reason, (this.deadReasons.get(e.reason) ?? 0) + 1);
    });
    worker.on('job:duplicate', (e) => {
      if (e.state === 'completed') this.duplicates++;
    });
  }

  /** Messages that have reached their end: deleted after success, as a duplicate, or dead-lettered. */
  get finished(): number {
    return this.succeeded + this.deadLettered + this.duplicates;
  }

  line(total: number, elapsedMs: number): string {
    const w = [...this.waits].sort((a, b) => a - b);
    const p = [...this.processes].sort((a, b) => a - b);
    return (
      `${(elapsedMs / 1000).toFixed(1).padStart(5)}s  done ${this.succeeded}  retried ${this.retried}  dead-lettered ${this.deadLettered}` +
      `  duplicates ${this.duplicates}  running ${this.running}  left ${Math.max(0, total - this.finished)}` +
      `  | wait p50 ${ms(percentile(w, 50))} p99 ${ms(percentile(w, 99))}  process p50 ${ms(percentile(p, 50))} p99 ${ms(percentile(p, 99))}`
    );
  }

  #job(name: string) {
    let entry = this.perJob.get(name);
    if (entry === undefined) {
      entry = { ok: 0, failed: 0 };
      this.perJob.set(name, entry);
    }
    return entry;
  }
}
