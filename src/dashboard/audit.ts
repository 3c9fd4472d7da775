import { FILTER_FIELDS } from '../ops/dlq-filter.js';
import type { CancelResult } from '../status/cancel.js';
import type { AuthVia, Identity } from './auth.js';
import type { Page } from './layout.js';
import { FILTER_PARAMS } from './pages/dead-letters.js';

/**
 * What an action came to: `done`; `counted` (a dry run); a cancel's `cancelled`, `already ended`
 * or `not found` (a schedule's too); `refused` (not acted on: read-only, a bad form or CSRF token,
 * another host or site, `authorize`, the credential); `failed` (an error: the store or SQS).
 */
export type Outcome = 'done' | 'counted' | 'cancelled' | 'already ended' | 'not found' | 'refused' | 'failed';

/** What a cancel came to, by what it did. */
export const CANCEL_OUTCOMES: Readonly<Record<CancelResult['outcome'], Outcome>> = {
  cancelled: 'cancelled',
  ended: 'already ended',
  'not-found': 'not found',
};

/** An action's answer (a page, or a response such as a redirect) and, when its status does not say it, what it came to. */
export interface Acted {
  readonly answer: Page | Response;
  readonly outcome?: Outcome;
}

/** Where the dashboard's audit lines go: pino's `info` and `warn` (a pino logger, or anything with the two). */
export interface AuditLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

/** One action's audit line (the `audit` field of the log line): who did what, to what, and how it was answered. */
export interface AuditEntry {
  /** `replay`, `purge`, `cancel`, `schedule-pause`, `schedule-resume`, `schedule-trigger`, `pause` or `resume`. */
  readonly action: string;
  /** The user, when known: the basic auth user, the bearer token's name, the ALB's signed `email` or `sub`, or `authorize`'s. */
  readonly user: string | undefined;
  /** How the user was known (none: no sign-in configured). */
  readonly auth: AuthVia | undefined;
  /** The HTTP status the action was answered with (303: done and redirected; 4xx: refused; 5xx: failed). */
  readonly status: number;
  /** What it came to. */
  readonly outcome: Outcome;
  /** Why it was refused, when it was before reaching the action (a credential, `authorize`, the host, another site). */
  readonly refused?: string;
  /** A replay or purge: its dry run (counts, keeps a confirmation) or its confirmation (acts). */
  readonly step?: 'dry run' | 'confirm';
  /** The DLQ of a replay or purge. */
  readonly dlq?: string;
  /** The job of a cancel, or the schedule of a schedule action. */
  readonly id?: string;
  /** A schedule's run now: the job it sent. */
  readonly job?: string;
  /** A pause's or resume's scope (`queue`, `job`, `tenant`), its `for` and `reason`. */
  readonly pause?: Readonly<Record<string, string>>;
  /** A replay's or purge's filter (the dry run's, which its confirmation acts on), as its URL parameters. */
  readonly filter?: Readonly<Record<string, string>>;
  /** A confirmed replay or purge: how many it moved or deleted, of how many matched. */
  readonly done?: number;
  readonly matched?: number;
}

const short = (v: string) => v.slice(0, 200);

/** What an answer's status says an action came to, when the action did not say. */
function outcomeOf(status: number, step: AuditEntry['step']): Outcome {
  if (status >= 500) return 'failed';
  if (status >= 400) return 'refused';
  return step === 'dry run' ? 'counted' : 'done';
}

/** What a form says an action is about (its DLQ, job or schedule, its filter, and for a sweep its step), and what it came to. */
export function auditEntry(
  action: string,
  form: URLSearchParams | undefined,
  who: Identity,
  status: number,
  outcome?: Outcome,
): AuditEntry {
  const sweep = action === 'replay' || action === 'purge';
  const entry: { -readonly [K in keyof AuditEntry]: AuditEntry[K] } = { action, user: who.user, auth: who.via, status, outcome: 'done' };
  if (sweep && form !== undefined) entry.step = form.has('confirmation') ? 'confirm' : 'dry run';
  entry.outcome = outcome ?? outcomeOf(status, entry.step);
  if (form === undefined) return entry;
  const dlq = form.get('dlq');
  if (dlq !== null) entry.dlq = short(dlq);
  const id = form.get('id');
  if (!sweep && id !== null) entry.id = short(id);
  if (action === 'pause' || action === 'resume') {
    const fields = ['queue', 'job', 'tenant', 'for', 'reason'].flatMap((k) => {
      const v = (form.get(k) ?? '').trim();
      return v === '' ? [] : [[k, short(v)]];
    });
    entry.pause = Object.fromEntries(fields);
  }
  if (sweep && entry.step === 'dry run') {
    const filter: Record<string, string> = {};
    for (const k of FILTER_FIELDS) {
      const v = form.get(FILTER_PARAMS[k]);
      if (v !== null && v.trim() !== '') filter[FILTER_PARAMS[k]] = short(v);
    }
    entry.filter = filter;
  }
  return entry;
}

/** Write one action's audit line: info when it acted (or found nothing to act on), warn when refused or failed. */
export function writeAudit(log: AuditLog, entry: AuditEntry): void {
  const who = entry.user ?? (entry.auth === undefined ? 'no signed-in user' : `an unnamed ${entry.auth} user`);
  const why = entry.refused === undefined ? '' : `: ${entry.refused}`;
  const message = `dashboard ${entry.action}${entry.step === undefined ? '' : ` (${entry.step})`} by ${who}: ${entry.outcome} (${entry.status}${why})`;
  if (entry.outcome === 'refused' || entry.outcome === 'failed') log.warn({ audit: entry }, message);
  else log.info({ audit: entry }, message);
}

/** Write the line of an action refused for its credential (401): never the credential, nor the user it named. */
export function writeRefusal(log: AuditLog, action: string, reason: string): void {
  log.warn({ audit: { action, status: 401, outcome: 'refused', refused: reason } }, `dashboard ${action} refused (401): ${reason}`);
}
