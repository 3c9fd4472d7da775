import { setTimeout as sleep } from 'node:timers/promises';
import { SCHEDULE_SHARDS } from '../ports/schedule-store.js';
import type { TickRota } from '../ports/tick-rota.js';
import { type TickPorts, type TickReport, tickShard } from './tick.js';

/** Ticks start this far into each second, spread over a worker's fleet by a random part of it. */
const SPREAD_MS = 200;
/** After a tick failed (the store unreachable), the next waits this long: a down store is not asked every second. */
const AFTER_FAILURE_MS = 5_000;

export interface TickerPorts extends TickPorts {
  /** Which worker reads each shard each second (one of the fleet, with memcached). */
  readonly rota: TickRota;
  readonly signal: AbortSignal;
  /** A tick that fired or skipped something, for the log and metrics. */
  onTick(shard: number, report: TickReport): void;
  /** A tick that failed (the store or the rota unreachable): it is tried again later. */
  onError(error: unknown): void;
}

/**
 * A worker's schedule ticks: each second, each shard of the due index whose turn the rota gives
 * this worker is ticked (tick.ts); shards go at once, each on its own. Runs until the signal aborts;
 * the promise settles when the last tick has ended (its sends made or left due).
 */
export async function runTicker(p: TickerPorts): Promise<void> {
  const spreadMs = Math.floor(Math.random() * SPREAD_MS);
  while (!p.signal.aborted) {
    const second = Math.floor(Date.now() / 1000);
    const ticks = Array.from({ length: SCHEDULE_SHARDS }, (_, shard) => tickIfMine(p, shard, second));
    const failed = (await Promise.all(ticks)).some((ok) => !ok);
    const waitMs = failed ? AFTER_FAILURE_MS : (second + 1) * 1000 + spreadMs - Date.now();
    await sleep(Math.max(0, waitMs), undefined, { signal: p.signal }).catch(() => {});
  }
}

/** False when the tick failed. */
async function tickIfMine(p: TickerPorts, shard: number, second: number): Promise<boolean> {
  try {
    if (!(await p.rota.mine(shard, second))) return true;
    const report = await tickShard(p, shard);
    if (report.fired + report.skipped > 0) p.onTick(shard, report);
    return true;
  } catch (error) {
    p.onError(error);
    return false;
  }
}
