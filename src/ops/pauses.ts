import { hostname, userInfo } from 'node:os';
import { ConfigError } from '../core/errors.js';
import {
  describeScope,
  inForce,
  MAX_PAUSE_BY,
  MAX_PAUSE_REASON,
  pauseTextProblem,
  type PauseMark,
  type PauseScope,
  scopeKey,
  scopeProblem,
} from '../core/pause.js';
import type { ControlNotices, ControlStore } from '../ports/control-store.js';

/** The longest a timed pause may last: a year (a longer one is a pause until resumed). */
export const MAX_PAUSE_SECONDS = 366 * 86_400;

/** What a pause is given: how long it lasts (else until resumed), why, and who makes it. */
export interface PauseRequest {
  /** Resume by itself after this many seconds (1 to 366 days' worth). */
  readonly forSeconds?: number;
  readonly reason?: string;
  /** Who pauses (default: the user and host of this process). */
  readonly by?: string;
}

/** A pause as listed: what, who, why, since and until when, and whether it is in force now. */
export interface PauseView {
  readonly scope: PauseScope;
  /** The key it is kept under: `queue:<name>`, `job:<name>`, `tenant:<id>`, `job:<name> tenant:<id>`. */
  readonly key: string;
  /** `job "x" for tenant "t"`, and the like. */
  readonly what: string;
  readonly by: string;
  readonly reason?: string;
  readonly at: Date;
  readonly until?: Date;
  /** False once a timed pause has run out (it is kept until resumed or paused again, and holds nothing). */
  readonly inForce: boolean;
}

/**
 * Pause and resume queues, job types and tenants, and list what is paused: kept in the job store
 * (durable), then told to the workers through their memcached, where they look each second. Without
 * memcached (`told` false) workers see a change within 30 s, when they read the store anyway.
 * Made by createPauses(); close() when done.
 */
export class Pauses {
  readonly #controls: ControlStore;
  readonly #notices: ControlNotices | undefined;
  readonly #close: () => void;

  /** Whether it tells the workers through their memcached (false: none given; they see a change within 30 s). */
  get tells(): boolean {
    return this.#notices !== undefined;
  }

  constructor(deps: { controls: ControlStore; notices: ControlNotices | undefined; close: () => void }) {
    this.#controls = deps.controls;
    this.#notices = deps.notices;
    this.#close = deps.close;
  }

  /**
   * Pause `scope` (a queue, a job type, a tenant, or a job type for one tenant), over any pause of
   * the same scope. Running jobs finish; see docs/guide/pause.md for what waits and where.
   */
  async pause(scope: PauseScope, request: PauseRequest = {}): Promise<{ readonly pause: PauseView; readonly told: boolean }> {
    const mark = markOf(scope, request, Date.now());
    const version = await this.#controls.putPause(mark);
    return { pause: viewOf(mark, mark.at), told: await this.#tell(version) };
  }

  /** Resume `scope`: `resumed` false when it was not paused. */
  async resume(scope: PauseScope): Promise<{ readonly resumed: boolean; readonly told: boolean }> {
    const problem = scopeProblem(scope);
    if (problem !== undefined) throw new ConfigError(`invalid resume: ${problem}`);
    const { removed, version } = await this.#controls.removePause(scope);
    return { resumed: removed, told: removed ? await this.#tell(version) : true };
  }

  /** Every pause kept, those in force first, then by when they were made. */
  async list(now = Date.now()): Promise<PauseView[]> {
    const { marks } = await this.#controls.readPauses();
    return marks.map((m) => viewOf(m, now)).sort((a, b) => Number(b.inForce) - Number(a.inForce) || a.at.getTime() - b.at.getTime());
  }

  /** Close the clients made for it (a store handed in stays open). */
  close(): void {
    this.#close();
  }

  async #tell(version: number): Promise<boolean> {
    return this.#notices === undefined ? false : this.#notices.tell(String(version));
  }
}

/** The mark a pause request makes, or a ConfigError naming the field and the rule. */
function markOf(scope: PauseScope, r: PauseRequest, now: number): PauseMark {
  const problem = scopeProblem(scope);
  if (problem !== undefined) throw new ConfigError(`invalid pause: ${problem}`);
  const s = r.forSeconds;
  if (s !== undefined && (!Number.isInteger(s) || s < 1 || s > MAX_PAUSE_SECONDS))
    throw new ConfigError(`invalid pause: for: must be a whole number of seconds from 1 to ${MAX_PAUSE_SECONDS} (366 days)`);
  const reasonProblem = r.reason === undefined ? undefined : pauseTextProblem('reason', r.reason, MAX_PAUSE_REASON);
  if (reasonProblem !== undefined) throw new ConfigError(`invalid pause: ${reasonProblem}`);
  const by = r.by ?? defaultBy();
  const byProblem = by.length === 0 ? 'by: must not be empty' : pauseTextProblem('by', by, MAX_PAUSE_BY);
  if (byProblem !== undefined) throw new ConfigError(`invalid pause: ${byProblem}`);
  const key = scopeKey(scope);
  const clean = key.startsWith('queue:') ? { queue: scope.queue } : { job: scope.job, tenant: scope.tenant };
  return {
    scope: JSON.parse(JSON.stringify(clean)) as PauseScope,
    by,
    at: now,
    ...(r.reason === undefined || r.reason === '' ? {} : { reason: r.reason }),
    ...(s === undefined ? {} : { until: now + s * 1000 }),
  };
}

function viewOf(m: PauseMark, now: number): PauseView {
  return {
    scope: m.scope,
    key: scopeKey(m.scope),
    what: describeScope(m.scope),
    by: m.by,
    ...(m.reason === undefined ? {} : { reason: m.reason }),
    at: new Date(m.at),
    ...(m.until === undefined ? {} : { until: new Date(m.until) }),
    inForce: inForce(m, now),
  };
}

/** This process's user and host, for a pause made without `by`. */
function defaultBy(): string {
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {
    // no user entry (a container's uid): the host alone says where it came from
  }
  return `${user}@${hostname()}`.slice(0, MAX_PAUSE_BY);
}
