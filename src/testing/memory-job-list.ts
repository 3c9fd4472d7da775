import {
  cursorTime,
  fromListCursor,
  type JobList,
  type JobListPage,
  type JobListQuery,
  type JobListRow,
  listLimit,
  listOrderKey,
  listTimeKey,
  toListCursor,
} from '../ports/job-list.js';
import type { JobState } from '../ports/status-store.js';

/** What the list reads of a MemoryJobStore record. */
export interface ListedRecord {
  readonly jobId: string;
  readonly jobName: string;
  readonly state?: JobState;
  readonly attempt?: number;
  readonly tenant?: string;
  /** What its last state change said (listSaid). */
  readonly listSaid?: string;
  /** When its state last changed (epoch ms): its place in the list. */
  readonly listedAtMs?: number;
  /** The tenant its last state change gave (none: it is in no tenant's list, as in DynamoDB's). */
  readonly listTenant?: string;
}

/**
 * The jobs list over MemoryJobStore's records: every record with a state, filtered and ordered as
 * DynamoDB's list answers (test/contracts/job-list-port.test.ts holds them to it). Its pages are
 * always full: it reads everything.
 */
export class MemoryJobList implements JobList {
  readonly #records: () => Iterable<ListedRecord>;

  constructor(records: () => Iterable<ListedRecord>) {
    this.#records = records;
  }

  async list(query: JobListQuery, cursor?: string): Promise<JobListPage> {
    const limit = listLimit(query);
    const before = cursor === undefined ? undefined : fromListCursor(cursor);
    const since = query.since === undefined ? undefined : listTimeKey(query.since.getTime());
    const matched = [...this.#records()]
      .flatMap((r) => {
        if (r.state === undefined || r.listedAtMs === undefined) return [];
        if ((query.job !== undefined && r.jobName !== query.job) || (query.state !== undefined && r.state !== query.state)) return [];
        if (query.tenant !== undefined && r.listTenant !== query.tenant) return [];
        const key = listOrderKey(r.listedAtMs, r.jobId);
        if ((since !== undefined && key < since) || (before !== undefined && key >= before)) return [];
        return [{ key, row: rowOf(r, r.state, r.listedAtMs) }];
      })
      .sort((a, b) => (a.key < b.key ? 1 : a.key > b.key ? -1 : 0));
    const page = matched.slice(0, limit);
    if (matched.length <= limit) return { rows: page.map((m) => m.row), cursor: undefined };
    const next = toListCursor(page.at(-1)!.key);
    return { rows: page.map((m) => m.row), cursor: next, lookedBackTo: cursorTime(next) };
  }
}

function rowOf(r: ListedRecord, state: JobState, atMs: number): JobListRow {
  return {
    jobId: r.jobId,
    jobName: r.jobName,
    ...(r.tenant === undefined ? {} : { tenant: r.tenant }),
    state,
    attempt: r.attempt ?? 0,
    at: new Date(atMs).toISOString(),
    ...(r.listSaid === undefined || r.listSaid === '' ? {} : { said: r.listSaid }),
  };
}
