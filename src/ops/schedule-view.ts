import type { ScheduleRecord } from '../ports/schedule-store.js';
import { occurrenceJobId } from '../core/envelope.js';
import { planOf } from '../schedules/stored.js';

/** How many next occurrences a view shows, and how many due by now. */
const UPCOMING = 3;
const RECENT = 5;

/** A schedule as `get`, `list` and `sqs-jobs schedules show` show it. Times are ISO 8601 in UTC. */
export interface ScheduleView {
  readonly id: string;
  /** `app:<name>` (declared in code, put by `sqs-jobs schedules sync`) or `runtime`. */
  readonly owner: string;
  readonly job: string;
  readonly args: unknown;
  readonly cron?: string;
  readonly every?: string;
  readonly tz: string;
  readonly overlap: string;
  readonly catchUp: 'none' | 'latest' | { readonly withinSeconds: number; readonly max: number };
  readonly start?: string;
  readonly end?: string;
  readonly queueUrl: string;
  readonly paused: boolean;
  /** The first occurrence not fired yet; absent when none is left. */
  readonly next?: string;
  /** The next occurrences from `next` on (up to 3). */
  readonly upcoming: readonly string[];
  /** The occurrences due by now, the latest first (up to 5), each with the job id it ran as, if it ran (skipped ones did not). */
  readonly recent: readonly { readonly at: string; readonly jobId: string }[];
  readonly lastFired?: string;
  /** The job of the last occurrence fired: `sqs-jobs job <id>` shows how it ended. */
  readonly lastJobId?: string;
  /** Occurrences not run (catch-up, overlap) since it was created. */
  readonly skipped: number;
  readonly revision: number;
  /** Why no worker can fire it (a spec this version cannot read). */
  readonly problem?: string;
}

const iso = (s: number | undefined) => (s === undefined ? undefined : new Date(s * 1000).toISOString());

/** A stored schedule as it is shown: its rules, and its occurrences (next, and due by now) in UTC. */
export function viewOf(r: ScheduleRecord): ScheduleView {
  const plan = planOf(r.spec);
  const base = {
    id: r.id,
    owner: r.owner,
    paused: r.paused,
    ...(r.next === undefined ? {} : { next: iso(r.next) }),
    ...(r.lastFired === undefined ? {} : { lastFired: iso(r.lastFired), lastJobId: occurrenceJobId(r.id, r.lastFired) }),
    skipped: r.skipped,
    revision: r.revision,
  };
  if (typeof plan === 'string')
    return {
      ...base,
      job: '?',
      args: undefined,
      tz: '?',
      overlap: '?',
      catchUp: 'none',
      queueUrl: '?',
      upcoming: [],
      recent: [],
      problem: plan,
    };
  const s = plan.spec;
  const { next, last } = plan.occurrences;
  const upcoming: string[] = [];
  for (let at = r.next; at !== undefined && upcoming.length < UPCOMING; at = next(at)) upcoming.push(iso(at)!);
  const recent: { at: string; jobId: string }[] = [];
  for (let at = last(Math.floor(Date.now() / 1000)); at !== undefined && recent.length < RECENT; at = last(at - 1))
    recent.push({ at: iso(at)!, jobId: occurrenceJobId(r.id, at) });
  return {
    ...base,
    job: s.job,
    args: s.args,
    ...(s.cron === undefined ? {} : { cron: s.cron }),
    ...(s.every === undefined ? {} : { every: s.every }),
    tz: s.tz,
    overlap: s.overlap,
    catchUp: typeof s.catchUp === 'string' ? s.catchUp : { withinSeconds: s.catchUp.withinS, max: s.catchUp.max },
    ...(s.startS === undefined ? {} : { start: iso(s.startS) }),
    ...(s.endS === undefined ? {} : { end: iso(s.endS) }),
    queueUrl: s.queueUrl,
    upcoming,
    recent,
  };
}
