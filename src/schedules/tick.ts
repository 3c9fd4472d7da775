import { randomUUID } from 'node:crypto';
import type { ScheduleRecord, ScheduleStore } from '../ports/schedule-store.js';
import { dueAt } from './catch-up.js';
import { occurrenceJobId } from '../core/envelope.js';
import { type Plan, planOf } from './stored.js';
import { type BusyPorts, busyOf } from '../core/busy.js';

/*
 * One tick over one shard of the due index: every schedule due by now is claimed (one tick wins),
 * its due occurrences sent as jobs with their deterministic ids, and it is moved on to its next
 * occurrence under the claim. Nothing here is a leader: every worker ticks, and the store's
 * conditional writes decide. A tick that dies after its claim leaves the schedule due again once
 * the claim lapses (CLAIM_S): the next tick sends the same job ids, which run once.
 */

/** How long a tick's claim holds a schedule: what a dead worker's claim delays its occurrence by at most. */
export const CLAIM_S = 30;
/** A claim stops sending this long before it lapses, and leaves the rest due: no send outlives its claim. */
const CLAIM_MARGIN_S = 5;
/** Schedules one tick fires from a shard at most, and the index pages it reads for them at most. */
const PER_TICK = 100;
const PAGES = 10;
/** Schedules of one page fired at once (each a claim, its sends, an advance). */
const AT_ONCE = 10;

/** The overlap rule reads the previous occurrence's job by BusyPorts (core/busy.ts). */
export interface TickPorts extends BusyPorts {
  readonly store: ScheduleStore;
  /**
   * Send an occurrence's job (the job id is the occurrence's): resolves once the queue has it, or
   * with why it never can be (its args no longer pass the job's schema): that occurrence is then
   * counted skipped. Rejects when it may be sent later (the queue unreachable).
   */
  send(o: {
    readonly job: string;
    readonly args: unknown;
    readonly jobId: string;
    readonly queueUrl: string;
  }): Promise<undefined | { refused: string }>;
  /** This worker, as its claims name it. */
  readonly me: string;
  /** Whether this worker has the job: one that has not leaves the schedule to a worker that has (workers of other apps, or of another version, share a table). */
  has(job: string): boolean;
  /** Aborted: the tick fires no further schedule, and sends no further occurrence (what is left stays due). */
  readonly signal?: AbortSignal;
  /** The time, in epoch seconds: read for each schedule and before each send. */
  now(): number;
  /** A schedule that cannot be fired (its spec unreadable, a send that failed): said, never thrown. */
  onProblem(scheduleId: string, problem: string): void;
  /** An occurrence's job was sent (for events and metrics): told once the schedule moved past it. */
  onFired?(o: Occurrence & { readonly jobId: string }): void;
  /** Occurrences of a schedule that will not run (overlap, catch-up, refused by enqueue). */
  onSkipped?(o: Omit<Occurrence, 'occurrence'> & { readonly count: number }): void;
}

/** One occurrence of a schedule, as the tick reports it. */
export interface Occurrence {
  readonly schedule: string;
  readonly job: string;
  readonly queueUrl: string;
  /** Its time, in epoch seconds. */
  readonly occurrence: number;
}

/** What one tick did. */
export interface TickReport {
  fired: number;
  skipped: number;
  /** Due schedules another tick claimed first. */
  claimedElsewhere: number;
  /** Due schedules of jobs this worker does not have: left to one that has. */
  notMine: number;
  /** It fired as many as one tick may: more may be due. */
  full: boolean;
}

export async function tickShard(p: TickPorts, shard: number): Promise<TickReport> {
  const report: TickReport = { fired: 0, skipped: 0, claimedElsewhere: 0, notMine: 0, full: false };
  let taken = 0;
  let cursor: string | undefined;
  // Schedules this worker leaves alone keep their place at the front of the index: read past them.
  for (let page = 0; page < PAGES && taken < PER_TICK && !p.signal?.aborted; page++) {
    const due = await p.store.dueSchedules(shard, p.now(), PER_TICK, cursor);
    const mine: [ScheduleRecord, Plan][] = [];
    for (const r of due.schedules) {
      if (taken + mine.length >= PER_TICK) break;
      const nowS = p.now();
      // The index is read eventually consistent: what it shows may have moved on already.
      if (r.paused || r.next === undefined || r.next > nowS || (r.claim !== undefined && r.claim.untilS > nowS)) continue;
      const plan = planOf(r.spec);
      if (typeof plan === 'string') p.onProblem(r.id, plan);
      else if (!p.has(plan.job)) report.notMine++;
      else mine.push([r, plan]);
    }
    taken += mine.length;
    for (let i = 0; i < mine.length && !p.signal?.aborted; i += AT_ONCE)
      await Promise.all(mine.slice(i, i + AT_ONCE).map(([r, plan]) => fire(p, r, r.next!, plan, report)));
    if (due.cursor === undefined) break;
    cursor = due.cursor;
  }
  report.full = taken >= PER_TICK;
  return report;
}

async function fire(p: TickPorts, r: ScheduleRecord, from: number, plan: Plan, report: TickReport): Promise<void> {
  const nowS = p.now();
  const due = dueAt(plan.occurrences, from, nowS, plan.catchUp);
  const token = `${p.me}:${randomUUID().slice(0, 8)}`;
  const untilS = nowS + CLAIM_S;
  if (!(await p.store.claimSchedule(r.id, { next: from, revision: r.revision }, { by: token, untilS, nowS }))) {
    report.claimedElsewhere++;
    return;
  }
  let skipped = due.skipped;
  let lastFired = r.lastFired;
  const fired: number[] = [];
  const advance = async (next: number | undefined) => {
    report.skipped += skipped;
    if (!(await p.store.advanceSchedule(r.id, { by: token, from, revision: r.revision }, { next, lastFired, skipped }))) return;
    // Told once the schedule moved on: a tick whose claim was lost sends the same again (the same job ids), and is not counted twice.
    const o = { schedule: r.id, job: plan.job, queueUrl: plan.queueUrl };
    for (const occurrence of fired) p.onFired?.({ ...o, occurrence, jobId: occurrenceJobId(r.id, occurrence) });
    if (skipped > 0) p.onSkipped?.({ ...o, count: skipped });
  };
  // Overlap is asked once, of the last occurrence fired before this tick. Of the ones due together
  // (catching up), `skip` sends the latest (sent together they would overlap), `allow` each.
  const previous = lastFired === undefined ? undefined : occurrenceJobId(r.id, lastFired);
  const busy =
    plan.overlap !== 'allow' && previous !== undefined && (await busyOf(p, previous, await p.stateOf(previous), nowS)) !== undefined;
  let sending: readonly number[] = due.fire;
  let then = due.next;
  if (plan.overlap === 'buffer-one') {
    // One occurrence waits at most: the first not fired (however late: it was kept), and past it the latest due.
    const dueCount = due.skipped + due.fire.length; // every occurrence due, `from` the first
    const latest = Math.max(from, ...due.fire);
    if (busy) {
      // Kept at `from` under the claim, looked at again when it lapses; a later one is kept instead of it.
      if (latest > from) {
        skipped = dueCount - 1;
        await advance(latest);
      }
      return;
    }
    sending = [from];
    then = latest > from ? latest : due.next;
    skipped = dueCount - (latest > from ? 2 : 1);
  } else if (busy) {
    skipped += sending.length;
    sending = [];
  } else if (plan.overlap === 'skip' && sending.length > 1) {
    skipped += sending.length - 1;
    sending = sending.slice(-1);
  }
  for (const occurrence of sending) {
    if (p.now() >= untilS - CLAIM_MARGIN_S || p.signal?.aborted) return void (await advance(occurrence));
    let sent: undefined | { refused: string };
    try {
      sent = await p.send({ job: plan.job, args: plan.args, jobId: occurrenceJobId(r.id, occurrence), queueUrl: plan.queueUrl });
    } catch (error) {
      // Not sent: the claim lapses and the next tick sends this occurrence again (the ones before it ran once).
      p.onProblem(r.id, `occurrence ${occurrence} not sent: ${(error as Error).message}`);
      return;
    }
    if (sent !== undefined) {
      // It never can be: said, counted skipped, and the schedule goes on (a fixed spec sends again).
      p.onProblem(r.id, `occurrence ${occurrence} skipped: ${sent.refused}`);
      skipped++;
      continue;
    }
    lastFired = occurrence;
    report.fired++;
    fired.push(occurrence);
  }
  await advance(then);
}
