/**
 * The effects log: one CSV line per handler run, appended by every worker process to one file
 * (O_APPEND, whole lines per write), read back once a run is over.
 *   key,jobId,enqueuedAtMs,startMs,endMs,pid,attempt
 */
import { appendFileSync, existsSync, readFileSync } from 'node:fs';

export interface Effect {
  readonly key: string;
  readonly jobId: string;
  readonly enqueuedAt: number;
  readonly start: number;
  readonly end: number;
  readonly pid: number;
  readonly attempt: number;
}

/** Buffers lines and appends them in one write; `flush()` on a timer and before exit. */
export class EffectsWriter {
  readonly #path: string;
  #lines: string[] = [];

  constructor(path: string) {
    this.#path = path;
  }

  add(e: Effect): void {
    this.#lines.push(`${e.key},${e.jobId},${e.enqueuedAt},${e.start},${e.end},${e.pid},${e.attempt}\n`);
  }

  flush(): void {
    if (this.#lines.length === 0) return;
    const text = this.#lines.join('');
    this.#lines = [];
    appendFileSync(this.#path, text);
  }
}

export function readEffects(path: string): Effect[] {
  if (!existsSync(path)) return [];
  const out: Effect[] = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    const f = line.split(',');
    if (f.length !== 7) continue;
    out.push({
      key: f[0]!,
      jobId: f[1]!,
      enqueuedAt: Number(f[2]),
      start: Number(f[3]),
      end: Number(f[4]),
      pid: Number(f[5]),
      attempt: Number(f[6]),
    });
  }
  return out;
}
