import { ValidationError } from '../core/errors.js';
import { LIST_SAID_CHARS } from '../core/job-list-index.js';
import { type JobState, STATE_RANK } from './status-store.js';

/**
 * The jobs list: tracked jobs found by job name, state, tenant and time, newest state change
 * first, a page at a time. Only tracked jobs are there (a record with a state in the job store:
 * `track`); a job's row is its stored state (a `scheduled` job whose time has come reads
 * `scheduled` here and `waiting` by id; a fan-out parent whose children run reads `completed`).
 * Rows follow writes within a second or so (DynamoDB's indexes are eventually consistent).
 */
export interface JobList {
  /** One page of the jobs `query` matches, newest first; `cursor`: the `cursor` of the page before. */
  list(query: JobListQuery, cursor?: string): Promise<JobListPage>;
}

/** What to list: every filter given must match (none: every tracked job). */
export interface JobListQuery {
  /** The job name. */
  readonly job?: string;
  /** The stored state. */
  readonly state?: JobState;
  /** The tenant it was enqueued for (jobs recorded without one never match). */
  readonly tenant?: string;
  /** Only jobs whose state changed at or after this time. */
  readonly since?: Date;
  /** Rows per page, 1 to MAX_LIST_LIMIT (default DEFAULT_LIST_LIMIT). */
  readonly limit?: number;
}

/** One job in a list: what its record said at its last state change. */
export interface JobListRow {
  readonly jobId: string;
  readonly jobName: string;
  readonly tenant?: string;
  readonly state: JobState;
  readonly attempt: number;
  /** When it entered this state (ISO-8601): what the list is ordered by. */
  readonly at: string;
  /** What that change said (listSaid): a failure's reason and error, a retry's error, a cancel's reason. */
  readonly said?: string;
}

/**
 * A page of a list: fewer rows than asked and a cursor means the store stopped reading early
 * (tenant and job together, filtered: see DynamoJobList); `lookedBackTo` then says how far back it looked.
 */
export interface JobListPage {
  readonly rows: readonly JobListRow[];
  /** Where the next page starts (opaque); undefined: this was the last. */
  readonly cursor: string | undefined;
  /** The time the cursor points at (ISO-8601): everything newer has been listed. */
  readonly lookedBackTo?: string;
}

/** Rows per page when the query does not say. */
export const DEFAULT_LIST_LIMIT = 50;

/** The most rows a page holds. */
export const MAX_LIST_LIMIT = 200;

/** Every state a record can be stored in, in the order of a job's life. */
export const JOB_STATES: readonly JobState[] = (Object.keys(STATE_RANK) as JobState[]).sort((a, b) => STATE_RANK[a] - STATE_RANK[b]);

/** A query's page size: its limit, or the default; within 1..MAX_LIST_LIMIT. */
export function listLimit(query: JobListQuery): number {
  return Math.min(MAX_LIST_LIMIT, Math.max(1, Math.floor(query.limit ?? DEFAULT_LIST_LIMIT)));
}

/**
 * A row's place in the order every store lists in: the state change's epoch milliseconds (13
 * digits) and the job id, so that two changes in the same millisecond still have an order.
 * Greater is newer; a page ends where the next begins (its cursor is this key, exclusive).
 */
export function listOrderKey(atMs: number, jobId: string): string {
  return `${String(Math.max(0, Math.floor(atMs))).padStart(13, '0')}#${jobId}`;
}

/** The time part of a key: the lower bound of `since`. */
export function listTimeKey(atMs: number): string {
  return String(Math.max(0, Math.floor(atMs))).padStart(13, '0');
}

const ORDER_KEY = /^\d{13}#[A-Za-z0-9_.:-]{1,128}$/;

/** The time (ISO-8601) a cursor stands at. */
export function cursorTime(cursor: string): string {
  return new Date(Number(fromListCursor(cursor).slice(0, 13))).toISOString();
}

/**
 * What a state change says in the list: its reason and (but for `completed`) its error, on one line
 * (whitespace collapsed, control characters gone), cut to LIST_SAID_CHARS; '' when nothing.
 */
export function listSaid(state: JobState, error: string | undefined, reason: string | undefined): string {
  const text = oneLine([reason, state === 'completed' ? undefined : error].filter((t) => t !== undefined && t !== '').join(': '));
  return text.length > LIST_SAID_CHARS ? `${text.slice(0, LIST_SAID_CHARS - 1)}…` : text;
}

/** Text on one line: control characters (C0, DEL, C1) and runs of whitespace as one space, trimmed. */
export function oneLine(text: string): string {
  let out = '';
  for (const c of text) {
    const n = c.charCodeAt(0);
    out += n < 32 || (n >= 127 && n < 160) ? ' ' : c;
  }
  return out.replace(/\s+/g, ' ').trim();
}

/** A page's cursor: its last row's order key, as opaque text. */
export function toListCursor(orderKey: string): string {
  return Buffer.from(orderKey).toString('base64url');
}

/** The order key a cursor holds; OPTIONS_INVALID when it is not one a list gave. */
export function fromListCursor(cursor: string): string {
  const key = Buffer.from(cursor, 'base64url').toString();
  if (!ORDER_KEY.test(key))
    throw new ValidationError('OPTIONS_INVALID', 'jobs list', [{ field: 'cursor', rule: 'must be a cursor a page gave' }]);
  return key;
}
