import { randomUUID } from 'node:crypto';
import type { OutgoingMessage } from '../core/message.js';
import { TIMED_SHARDS, type TimedJobStore, type TimedRecord } from '../ports/timed-jobs.js';

/*
 * Jobs put off beyond SQS's delay are kept in the job store (ports/timed-jobs.ts) and sent from
 * here with the delay left, once their time is within HORIZON_S: SQS then holds each until its
 * time, so it starts on time however seldom this tick runs (every EVERY_S seconds a shard). Each is
 * claimed (one tick sends it), sent, then removed under its claim; a tick that dies after its send
 * leaves it to be sent again when the claim lapses, and its job id runs once. A debounced burst
 * (shards TIMED_SHARDS and up) is sent only once due, since each enqueue of its burst moves its time
 * and its message; its shards are read each second.
 */

/** A kept job is sent once its time is this close: under SQS's 900 s delay by a minute, so a late tick still sends it in time. */
export const HORIZON_S = 840;
/** How often each shard's kept jobs are looked at (fleet-wide, with the rota). */
export const EVERY_S = 10;
/** How long a tick's claim holds a kept job while it sends it. */
const CLAIM_S = 30;
const PER_TICK = 100;
const AT_ONCE = 10;

export interface TimedTickPorts {
  readonly timed: TimedJobStore;
  readonly me: string;
  readonly signal?: AbortSignal;
  /** The time, in epoch seconds. */
  now(): number;
  /** The time, in epoch milliseconds. */
  nowMs(): number;
  /** Send a kept job's message to its queue (with the delay left). */
  sendMessage(queueUrl: string, message: OutgoingMessage): Promise<void>;
  /** A kept job that could not be sent now (it is tried again when its claim lapses): said, never thrown. */
  onUnsent(jobId: string, problem: string): void;
}

/** How early a shard's jobs are sent: kept ones HORIZON_S ahead, debounced bursts when due. */
export const horizonOf = (shard: number): number => (shard >= TIMED_SHARDS ? 0 : HORIZON_S);

/** Index pages one tick reads at most. */
const PAGES = 10;

/**
 * Send the kept jobs of `shard` whose time is within its horizon (horizonOf): how many went, and whether more
 * may be due (every page read, and something was sent: a shard whose due jobs are all being sent
 * by others is not read again at once).
 */
export async function sendTimedShard(p: TimedTickPorts, shard: number): Promise<{ sent: number; full: boolean }> {
  let sent = 0;
  let cursor: string | undefined;
  for (let page = 0; page < PAGES && !p.signal?.aborted; page++) {
    const nowS = p.now();
    const dueByMs = p.nowMs() + horizonOf(shard) * 1000;
    const due = await p.timed.dueTimed(shard, Math.floor(dueByMs / 1000), PER_TICK, cursor);
    // The index is read eventually consistent: a claim may have been taken meanwhile. It is by the
    // second: one due later in this second waits for the next tick (a burst's time only moves later,
    // so an older copy never hides one that is due).
    const free = due.jobs.filter((j) => (j.claim === undefined && j.dueMs <= dueByMs) || (j.claim !== undefined && j.claim.untilS <= nowS));
    for (let i = 0; i < free.length && !p.signal?.aborted; i += AT_ONCE)
      sent += (await Promise.all(free.slice(i, i + AT_ONCE).map((j) => sendOne(p, j, dueByMs)))).filter(Boolean).length;
    if (due.cursor === undefined) return { sent, full: false };
    cursor = due.cursor;
  }
  return { sent, full: sent > 0 };
}

async function sendOne(p: TimedTickPorts, seen: TimedRecord, dueByMs: number): Promise<boolean> {
  const token = `${p.me}:${randomUUID().slice(0, 8)}`;
  const nowS = p.now();
  // The index's copy may be older than the job: what is sent is the job as claimed.
  const job = await p.timed.claimTimed(seen.jobId, { by: token, untilS: nowS + CLAIM_S, nowS, dueByMs });
  if (job === undefined) return false;
  // Rounded up: a job never starts before its time, and at most a second after it (plus the receive).
  const delaySeconds = Math.max(0, Math.min(900, Math.ceil((job.dueMs - p.nowMs()) / 1000)));
  try {
    await p.sendMessage(job.queueUrl, { ...job.message, delaySeconds });
  } catch (error) {
    p.onUnsent(job.jobId, `not sent: ${(error as Error).message}`);
    return false;
  }
  // Removed under its claim; if that fails the claim lapses and it is sent again, under the same job id.
  await p.timed
    .removeTimed(job.jobId, { claim: token })
    .catch((error: unknown) => p.onUnsent(job.jobId, `sent, not removed: ${(error as Error).message}`));
  return true;
}
