import { setTimeout as sleep } from 'node:timers/promises';
import { SCHEDULE_SHARDS } from '../ports/schedule-store.js';
import type { TickRota } from '../ports/tick-rota.js';
import { type TickPorts, type TickReport, tickShard } from './tick.js';
import { EVERY_S, sendTimedShard, type TimedTickPorts } from './timed-tick.js';
import { TIMED_SHARDS } from '../ports/timed-jobs.js';

/** Ticks start up to this far into each second, drawn afresh each second (so no one worker always asks first). */
const SPREAD_MS = 200;
/** After a tick failed (the store unreachable), the next waits this long: a down store is not asked every second. */
const AFTER_FAILURE_MS = 5_000;
/** A worker whose tick fired all it may goes on ticking the shard, while more are due, for this long at most. */
const BACKLOG_MS = 10_000;

export interface TickerPorts extends TickPorts, Omit<TimedTickPorts, 'timed'> {
  /** Where jobs put off beyond SQS's delay are kept; undefined when the store keeps none. */
  readonly timed: TimedTickPorts['timed'] | undefined;
  /** Which worker of those with the same jobs reads each shard each second (one, with memcached). */
  readonly rota: TickRota;
  /** A name for the set of jobs this worker has: it shares rota turns with the workers of the same set. */
  readonly jobs: string;
  readonly signal: AbortSignal;
  /** A tick that fired or skipped something, for the log and metrics. */
  onTick(shard: number, report: TickReport): void;
  /** Kept jobs sent, for the log and metrics. */
  onTimedSent(shard: number, sent: number): void;
  /** A tick that failed (the store or the rota unreachable): it is tried again later. */
  onError(error: unknown): void;
}

/**
 * A worker's schedule ticks: each second, each shard of the due index whose turn the rota gives
 * this worker is ticked (tick.ts); shards go at once, each on its own, and one with more due than
 * a tick fires is ticked again at once. Runs until the signal aborts; the promise settles when the
 * last tick has ended (its sends made or left due).
 */
export async function runTicker(p: TickerPorts): Promise<void> {
  while (!p.signal.aborted) {
    const second = Math.floor(Date.now() / 1000);
    const ticks = Array.from({ length: SCHEDULE_SHARDS }, (_, shard) => tickIfMine(p, shard, second));
    if (p.timed !== undefined) {
      // Kept jobs' shards every EVERY_S seconds (they go HORIZON_S early); debounced bursts' each second (they go when due).
      const kept = second % EVERY_S === 0 ? Array.from({ length: TIMED_SHARDS }, (_, shard) => shard) : [];
      const bursts = Array.from({ length: TIMED_SHARDS }, (_, shard) => TIMED_SHARDS + shard);
      ticks.push(...[...kept, ...bursts].map((shard) => sendTimedIfMine(p, shard, second)));
    }
    const failed = (await Promise.all(ticks)).some((ok) => !ok);
    const waitMs = failed ? AFTER_FAILURE_MS : (second + 1) * 1000 + Math.floor(Math.random() * SPREAD_MS) - Date.now();
    await sleep(Math.max(0, waitMs), undefined, { signal: p.signal }).catch(() => {});
  }
}

/** Kept jobs' turns are the shards after the schedules' (SCHEDULE_SHARDS + shard: kept, then debounced) in the same rota. False when it failed. */
async function sendTimedIfMine(p: TickerPorts, shard: number, second: number): Promise<boolean> {
  const timed = p.timed!;
  try {
    if (!(await p.rota.mine(p.jobs, SCHEDULE_SHARDS + shard, second))) return true;
    const until = Date.now() + BACKLOG_MS;
    for (;;) {
      const done = await sendTimedShard({ ...p, timed }, shard);
      if (done.sent > 0) p.onTimedSent(shard, done.sent);
      if (!done.full || p.signal.aborted || Date.now() >= until) return true;
    }
  } catch (error) {
    p.onError(error);
    return false;
  }
}

/** False when the tick failed. */
async function tickIfMine(p: TickerPorts, shard: number, second: number): Promise<boolean> {
  try {
    if (!(await p.rota.mine(p.jobs, shard, second))) return true;
    const until = Date.now() + BACKLOG_MS;
    for (;;) {
      const report = await tickShard(p, shard);
      if (report.fired + report.skipped > 0) p.onTick(shard, report);
      if (!report.full || p.signal.aborted || Date.now() >= until) return true;
    }
  } catch (error) {
    p.onError(error);
    return false;
  }
}
