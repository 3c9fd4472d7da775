import type { ScheduleRecord, ScheduleStore } from '../ports/schedule-store.js';
import { dueAt } from './catch-up.js';
import { occurrenceJobId } from './define.js';
import { type Plan, planOf } from './stored.js';

/*
 * One tick over one shard of the due index: every schedule due by now is claimed (one tick wins),
 * its due occurrences sent as jobs with their deterministic ids, and it is moved on to its next
 * occurrence under the claim. Nothing here is a leader: every worker ticks, and the store's
 * conditional writes decide. A tick that dies after its claim leaves the schedule due again once
 * the claim lapses (CLAIM_S): the next tick sends the same job ids, which run once.
 */

/** How long a tick's claim holds a schedule: what a dead worker's claim delays its occurrence by at most. */
export const CLAIM_S = 30;
/** Schedules one tick takes from a shard. */
const PER_TICK = 25;

export interface TickPorts {
  readonly store: ScheduleStore;
  /** Send an occurrence's job (the job id is the occurrence's): resolves once the queue has it. */
  send(o: { readonly job: string; readonly args: unknown; readonly jobId: string; readonly queueUrl: string }): Promise<void>;
  /** A job's state in the job store, for the overlap rule; undefined when it has no record. */
  stateOf(jobId: string): Promise<{ readonly state: string; readonly updatedAtS: number } | undefined>;
  /** This worker, as its claims name it. */
  readonly me: string;
  /** Whether this worker has the job: one that has not leaves the schedule to a worker that has (workers of other apps, or of another version, share a table). */
  has(job: string): boolean;
  /** A job recorded `running` for longer than this no longer blocks its schedule: its worker died (the visibility timeout and a margin). */
  readonly staleRunningS: number;
  /** A schedule that cannot be fired (its spec unreadable, a send that failed): said, never thrown. */
  onProblem(scheduleId: string, problem: string): void;
}

/** What one tick did. */
export interface TickReport {
  fired: number;
  skipped: number;
  /** Due schedules another tick claimed first. */
  claimedElsewhere: number;
  /** Due schedules of jobs this worker does not have: left to one that has. */
  notMine: number;
}

export async function tickShard(p: TickPorts, shard: number, nowS: number): Promise<TickReport> {
  const report: TickReport = { fired: 0, skipped: 0, claimedElsewhere: 0, notMine: 0 };
  for (const r of await p.store.dueSchedules(shard, nowS, PER_TICK)) {
    // The index is read eventually consistent: what it shows may have moved on already.
    if (r.paused || r.next === undefined || r.next > nowS || (r.claim !== undefined && r.claim.untilS > nowS)) continue;
    const plan = planOf(r.spec);
    if (typeof plan === 'string') {
      p.onProblem(r.id, plan);
      continue;
    }
    if (!p.has(plan.job)) {
      report.notMine++;
      continue;
    }
    await fire(p, r, r.next, plan, nowS, report);
  }
  return report;
}

async function fire(p: TickPorts, r: ScheduleRecord, from: number, plan: Plan, nowS: number, report: TickReport): Promise<void> {
  const due = dueAt(plan.occurrences, from, nowS, plan.catchUp);
  const claimed = await p.store.claimSchedule(r.id, { next: from, revision: r.revision }, { by: p.me, untilS: nowS + CLAIM_S, nowS });
  if (!claimed) {
    report.claimedElsewhere++;
    return;
  }
  let skipped = due.skipped;
  let lastFired = r.lastFired;
  const advance = (next: number | undefined) => p.store.advanceSchedule(r.id, { by: p.me, from }, { next, lastFired, skipped });
  for (const occurrence of due.fire) {
    if (plan.overlap !== 'allow' && lastFired !== undefined && (await stillBusy(p, occurrenceJobId(r.id, lastFired), nowS))) {
      if (plan.overlap === 'skip') {
        skipped++;
        continue;
      }
      // buffer-one: this occurrence waits for the one before it. The first due waits under the
      // claim, looked at again when it lapses; a later one (catching up) becomes the next due.
      report.skipped += skipped;
      if (occurrence !== from) await advance(occurrence);
      return;
    }
    try {
      await p.send({ job: plan.job, args: plan.args, jobId: occurrenceJobId(r.id, occurrence), queueUrl: plan.queueUrl });
    } catch (error) {
      // Not sent: the claim lapses and the next tick sends this occurrence again (the ones before it ran once).
      p.onProblem(r.id, `occurrence ${occurrence} not sent: ${(error as Error).message}`);
      return;
    }
    lastFired = occurrence;
    report.fired++;
  }
  report.skipped += skipped;
  await advance(due.next);
}

/** The previous occurrence's job still waits or runs (one left running by a dead worker counts no longer than staleRunningS). */
async function stillBusy(p: TickPorts, jobId: string, nowS: number): Promise<boolean> {
  const status = await p.stateOf(jobId);
  if (status === undefined) return false;
  if (status.state === 'waiting' || status.state === 'retrying') return true;
  return status.state === 'running' && nowS - status.updatedAtS < p.staleRunningS;
}
