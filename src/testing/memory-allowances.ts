import { type Allowance, allowanceWindow, withinAllowance } from '../core/allowance.js';
import type { Allowances } from '../ports/allowances.js';

/**
 * Spillover allowances in memory, shared by producers in one process:
 * `createProducer({ spillover: { …, allowances: new MemoryAllowances() } })`. It counts as
 * memcached's does and passes the same contract (test/contracts/allowances-port.test.ts).
 * `down = true` makes every call answer as an unreachable memcached does.
 */
export class MemoryAllowances implements Allowances {
  readonly #counts = new Map<string, { count: number; until: number }>();
  down = false;

  async take(key: string, count: number, allowance: Allowance, now: number): Promise<number | 'unavailable'> {
    if (this.down) return 'unavailable';
    if (!Number.isSafeInteger(count) || count < 1) return 0;
    if (this.#counts.size >= 1_000) for (const [name, c] of this.#counts) if (c.until < now) this.#counts.delete(name);
    const window = allowanceWindow(allowance, now);
    const name = `${key}/${window.index}`;
    const c = this.#counts.get(name) ?? { count: 0, until: (window.index + 1) * window.ms + 60_000 };
    c.count += count;
    this.#counts.set(name, c);
    return withinAllowance(allowance, count, c.count);
  }
}
