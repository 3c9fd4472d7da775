import { JOB_NAME_PATTERN } from './definition-rules.js';
import { tenantSchema } from './envelope.js';
import { brand } from './brand.js';
import { SqsJobsError } from './errors.js';

/*
 * Pauses: what an operator stopped from starting, and until when. A pause names a queue (not
 * received from), a job type, a tenant, or a job type for one tenant (their messages wait in the
 * workers, or go back to their queue for a while, on every queue but FIFO ones). The marks live in
 * the job store (ports/control-store.ts); this is their shape and the rules read from them.
 */

/** What a pause stops: a queue (by name), or a job type and/or a tenant. */
export interface PauseScope {
  readonly queue?: string;
  readonly job?: string;
  readonly tenant?: string;
}

/** A pause as kept: what, who, why, since when and until when (ms since the epoch). */
export interface PauseMark {
  readonly scope: PauseScope;
  /** Who paused it (the CLI: the user and host; the library: what the caller says). */
  readonly by: string;
  readonly reason?: string;
  readonly at: number;
  /** When it resumes by itself; undefined: until resumed. */
  readonly until?: number;
}

/**
 * Most pauses kept at once: their marks share one item of the job store, at most DynamoDB's 400 KB
 * (a mark at its longest, in 3-byte characters, is under 1.7 KB). A timed pause ended a day ago no
 * longer counts: the next pause removes it.
 */
export const MAX_PAUSES = 200;
/** Longest reason kept with a pause. */
export const MAX_PAUSE_REASON = 300;
/** Longest `by`. */
export const MAX_PAUSE_BY = 200;
/** How long a timed pause that ended stays listed (as ended) before a pause removes it. */
export const ENDED_PAUSE_KEPT_MS = 86_400_000;

/** What is wrong with a pause's `reason` or `by` text (control characters, length), or undefined. */
export function pauseTextProblem(field: 'reason' | 'by', text: string, max: number): string | undefined {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\u0000-\u001f\u007f]/.test(text)) return `${field}: must not hold control characters (a line break, a tab)`;
  if (text.length > max) return `${field}: must be at most ${max} characters`;
  return undefined;
}

const QUEUE_NAME_PATTERN = /^[A-Za-z0-9_-]{1,80}(\.fifo)?$/;

/** What is wrong with `scope`, naming the field; undefined when it names something that can be paused. */
export function scopeProblem(scope: PauseScope): string | undefined {
  const { queue, job, tenant } = scope;
  if (queue !== undefined && (job !== undefined || tenant !== undefined))
    return 'queue: a pause names a queue, or a job type and/or a tenant, not both';
  if (queue === undefined && job === undefined && tenant === undefined) return 'a pause must name a queue, a job or a tenant';
  if (queue !== undefined && !QUEUE_NAME_PATTERN.test(queue))
    return `queue "${queue}": must be a queue name (1-80 letters, digits, - and _, .fifo at the end for a FIFO queue)`;
  if (job !== undefined && !JOB_NAME_PATTERN.test(job))
    return `job "${job}": must be 1-80 characters of letters, digits, _ . : - and start with a letter or digit`;
  if (tenant !== undefined) {
    const parsed = tenantSchema.safeParse(tenant);
    if (!parsed.success) return `tenant "${tenant}": ${parsed.error.issues[0]?.message ?? 'is not a tenant id'}`;
  }
  return undefined;
}

/** The key a pause is kept under: `queue:<name>`, `job:<name>`, `tenant:<id>` or `job:<name> tenant:<id>`. */
export function scopeKey(scope: PauseScope): string {
  if (scope.queue !== undefined) return `queue:${scope.queue}`;
  const parts = [];
  if (scope.job !== undefined) parts.push(`job:${scope.job}`);
  if (scope.tenant !== undefined) parts.push(`tenant:${scope.tenant}`);
  return parts.join(' ');
}

/** The scope a key names (the inverse of scopeKey); undefined for a key it did not make. */
export function scopeOfKey(key: string): PauseScope | undefined {
  if (key.startsWith('queue:')) return { queue: key.slice('queue:'.length) };
  const m = /^(?:job:(\S+))?(?: ?tenant:(\S+))?$/.exec(key);
  if (m === null || (m[1] === undefined && m[2] === undefined)) return undefined;
  return { ...(m[1] === undefined ? {} : { job: m[1] }), ...(m[2] === undefined ? {} : { tenant: m[2] }) };
}

/** Said of a scope in messages: `queue "q"`, `job "x"`, `tenant "t"`, `job "x" for tenant "t"`. */
export function describeScope(scope: PauseScope): string {
  if (scope.queue !== undefined) return `queue "${scope.queue}"`;
  if (scope.job !== undefined && scope.tenant !== undefined) return `job "${scope.job}" for tenant "${scope.tenant}"`;
  return scope.job !== undefined ? `job "${scope.job}"` : `tenant "${scope.tenant}"`;
}

/** Whether `mark` holds at `now` (a timed one has not run out). */
export const inForce = (mark: PauseMark, now: number): boolean => mark.until === undefined || mark.until > now;

/**
 * The pauses in force, as a worker or a producer reads them: which one stops a queue, or a job of
 * a tenant. Made from the store's marks at a time; a timed mark stops holding at its `until`.
 */
export class PauseBoard {
  readonly #byKey: ReadonlyMap<string, PauseMark>;

  constructor(marks: readonly PauseMark[]) {
    this.#byKey = new Map(marks.map((m) => [scopeKey(m.scope), m]));
  }

  get marks(): readonly PauseMark[] {
    return [...this.#byKey.values()];
  }

  get size(): number {
    return this.#byKey.size;
  }

  /** The pause of queue `name` in force at `now`. */
  queue(name: string, now: number): PauseMark | undefined {
    return this.#inForce(`queue:${name}`, now);
  }

  /**
   * The pause that stops a job of `job` for `tenant` from starting at `now`: its job type's for the
   * tenant, its job type's, or its tenant's (its queue's is asked apart: queue()).
   */
  job(job: string, tenant: string | undefined, now: number): PauseMark | undefined {
    if (this.#byKey.size === 0) return undefined;
    const keys = tenant === undefined ? [`job:${job}`] : [`job:${job} tenant:${tenant}`, `job:${job}`, `tenant:${tenant}`];
    for (const key of keys) {
      const mark = this.#inForce(key, now);
      if (mark !== undefined) return mark;
    }
    return undefined;
  }

  /** Whether the pause kept under `key` (scopeKey) is in force at `now`. */
  holds(key: string, now: number): boolean {
    return this.#inForce(key, now) !== undefined;
  }

  /** The soonest `until` after `now` of a timed pause: when the board changes by itself. */
  nextEnd(now: number): number | undefined {
    let next: number | undefined;
    for (const m of this.#byKey.values())
      if (m.until !== undefined && m.until > now && (next === undefined || m.until < next)) next = m.until;
    return next;
  }

  #inForce(key: string, now: number): PauseMark | undefined {
    const mark = this.#byKey.get(key);
    return mark !== undefined && inForce(mark, now) ? mark : undefined;
  }
}

/** The shortest and longest a paused message is handed back for (seconds): SQS delays a message at most 900 s. */
export const PAUSED_DELAY_MIN_S = 10;

/**
 * How long a message found paused is handed back for: as long as the pause has lasted (at least
 * PAUSED_DELAY_MIN_S), at most `longestS` (the worker's pausedDelaySeconds) and at most until the
 * pause ends by itself. A short pause's messages come back soon after it; a long one's cost a few
 * hand-backs an hour each.
 */
export function pausedDelaySeconds(mark: PauseMark, now: number, longestS: number): number {
  const lasted = Math.ceil((now - mark.at) / 1000);
  let delay = Math.min(longestS, Math.max(PAUSED_DELAY_MIN_S, lasted));
  if (mark.until !== undefined) delay = Math.min(delay, Math.ceil((mark.until - now) / 1000));
  return Math.max(1, delay);
}

/** How long a producer refusing paused jobs tells a caller to wait when the pause has no end (`Retry-After`). */
export const PAUSED_RETRY_AFTER_S = 60;

/**
 * A producer with `whilePaused: 'refuse'` refused the job: its queue, job type or tenant is paused.
 * Nothing was sent. Try again after `retryAfterMs` (the HTTP API answers 503 with `Retry-After`):
 * the seconds left of a timed pause, else PAUSED_RETRY_AFTER_S.
 */
export class JobPausedError extends SqsJobsError {
  static {
    brand(JobPausedError, 'sqs-jobs/JobPausedError');
  }
  readonly pause: PauseMark;
  readonly retryAfterMs: number;

  constructor(job: string, pause: PauseMark, now: number) {
    const until = pause.until === undefined ? 'until resumed' : `until ${new Date(pause.until).toISOString()}`;
    super(
      'JOB_PAUSED',
      `job "${job}" was not enqueued: ${describeScope(pause.scope)} is paused ${until} by ${pause.by}${pause.reason === undefined ? '' : ` (${pause.reason})`}`,
    );
    this.pause = pause;
    this.retryAfterMs = pause.until === undefined ? PAUSED_RETRY_AFTER_S * 1000 : Math.max(1000, pause.until - now);
  }
}

/**
 * Of the marks kept, besides the one being put (`key`): how many still count against MAX_PAUSES,
 * and the keys of timed ones that ended over ENDED_PAUSE_KEPT_MS before `now` (removed with the put).
 */
export function sortOut(marks: readonly PauseMark[], key: string, now: number): { kept: number; ended: string[] } {
  const ended: string[] = [];
  let kept = 0;
  for (const m of marks) {
    const k = scopeKey(m.scope);
    if (k === key) continue;
    if (m.until !== undefined && m.until < now - ENDED_PAUSE_KEPT_MS) ended.push(k);
    else kept++;
  }
  return { kept, ended };
}
