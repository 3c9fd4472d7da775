import type { MessageAttributes } from '../core/message.js';
import { type TimedJob, type TimedJobStore, type TimedRecord, timedShardOf } from '../ports/timed-jobs.js';
import { type Item, N, readItem, S, type TableRef, Update, updateReturning } from './dynamodb-items.js';
import { deleteIf, duePage, fromCursor, putIfAbsent, toCursor } from './dynamodb-due-index.js';

/*
 * Jobs kept until their time, in the job store's table: `timed#<job id>`, with no TTL, in the
 * schedules' due index under partitions `t0`..`t7` (schedShard: timedShardOf) by their due second or their claim's
 * lapse (schedDue); `dueMs` keeps the time to the millisecond. The message is kept as the producer made it: its body, and its attributes as
 * JSON (a binary one in base64).
 */

export const timedKey = (jobId: string): Item => ({ pk: S(`timed#${jobId}`) });
const key = timedKey;
const shardKey = (shard: number) => `t${shard}`;

export class DynamoTimedJobs implements TimedJobStore {
  readonly #t: TableRef;

  constructor(table: TableRef) {
    this.#t = table;
  }

  async putTimed(job: TimedJob): Promise<boolean> {
    return putIfAbsent(this.#t, timedItem(job));
  }

  async getTimed(jobId: string): Promise<TimedRecord | undefined> {
    const item = await readItem(this.#t, key(jobId));
    return item === undefined ? undefined : recordOf(item);
  }

  async dueTimed(shard: number, untilS: number, limit: number, cursor?: string) {
    const start = cursor === undefined ? undefined : fromCursor<Item>(cursor);
    const page = await duePage(this.#t, shardKey(shard), 'schedDue <= :until', { ':until': N(untilS) }, limit, start);
    return { jobs: page.items.map(recordOf), cursor: page.last === undefined ? undefined : toCursor(page.last) };
  }

  async claimTimed(jobId: string, claim: { by: string; untilS: number; nowS: number; dueByMs: number }) {
    const u = new Update();
    const [until, due] = [u.name('claimUntil'), u.name('dueMs')];
    const free = `(attribute_not_exists(${until}) OR ${until} <= ${u.value(N(claim.nowS))})`;
    const condition = `attribute_exists(pk) AND ${free} AND ${due} <= ${u.value(N(claim.dueByMs))}`;
    u.set('claimBy', S(claim.by)).set('claimUntil', N(claim.untilS)).set('schedDue', N(claim.untilS));
    const item = await updateReturning(this.#t, key(jobId), u, condition);
    return item === undefined ? undefined : recordOf(item);
  }

  removeTimed(jobId: string, by: { claim: string } | { nowS: number }): Promise<boolean> {
    if ('claim' in by) return deleteIf(this.#t, key(jobId), 'claimBy = :by', { ':by': S(by.claim) });
    const free = 'attribute_exists(pk) AND (attribute_not_exists(claimUntil) OR claimUntil <= :now)';
    return deleteIf(this.#t, key(jobId), free, { ':now': N(by.nowS) });
  }
}

/** A kept job as its item (a debounced one in its own family of shards, `debounced` set). */
export function timedItem(job: TimedJob): Item {
  return {
    ...key(job.jobId),
    kind: S('timed'),
    jobId: S(job.jobId),
    jobName: S(job.jobName),
    queueUrl: S(job.queueUrl),
    body: S(job.message.body),
    ...(job.message.groupId === undefined ? {} : { groupId: S(job.message.groupId) }),
    attrs: S(attributesText(job.message.attributes)),
    dueMs: N(job.dueMs),
    tracked: { BOOL: job.tracked },
    enqueuedAt: S(job.enqueuedAt),
    ...(job.debounced === true ? { debounced: { BOOL: true } } : {}),
    schedShard: S(shardKey(timedShardOf(job))),
    schedDue: N(Math.floor(job.dueMs / 1000)),
  };
}

function recordOf(item: Item): TimedRecord {
  const claimBy = item.claimBy?.S;
  return {
    jobId: item.jobId!.S!,
    jobName: item.jobName!.S!,
    queueUrl: item.queueUrl!.S!,
    message: {
      body: item.body!.S!,
      attributes: attributesOf(item.attrs!.S!),
      ...(item.groupId?.S === undefined ? {} : { groupId: item.groupId.S }),
    },
    dueMs: Number(item.dueMs!.N),
    tracked: item.tracked?.BOOL === true,
    enqueuedAt: item.enqueuedAt!.S!,
    ...(item.debounced?.BOOL === true ? { debounced: true } : {}),
    claim: claimBy === undefined ? undefined : { by: claimBy, untilS: Number(item.claimUntil!.N) },
  };
}

type StoredAttribute = { t: string; s?: string; b?: string };

export function attributesText(a: MessageAttributes): string {
  const out: Record<string, StoredAttribute> = {};
  for (const [name, v] of Object.entries(a)) {
    out[name] = {
      t: v.DataType,
      ...(v.StringValue === undefined ? {} : { s: v.StringValue }),
      ...(v.BinaryValue === undefined ? {} : { b: Buffer.from(v.BinaryValue).toString('base64') }),
    };
  }
  return JSON.stringify(out);
}

function attributesOf(text: string): MessageAttributes {
  const stored = JSON.parse(text) as Record<string, StoredAttribute>;
  return Object.fromEntries(
    Object.entries(stored).map(([name, v]) => [
      name,
      {
        DataType: v.t,
        ...(v.s === undefined ? {} : { StringValue: v.s }),
        ...(v.b === undefined ? {} : { BinaryValue: new Uint8Array(Buffer.from(v.b, 'base64')) }),
      },
    ]),
  );
}
