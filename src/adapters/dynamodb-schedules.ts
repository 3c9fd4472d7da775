import { NEVER_DUE, type PutResult, SCHEDULE_SHARDS, type ScheduleRecord, type ScheduleStore, shardOf } from '../ports/schedule-store.js';
import { type Item, N, readItem, S, type TableRef, Update, updateIf } from './dynamodb-items.js';
import { deleteIf, duePage, fromCursor, putIfAbsent, toCursor } from './dynamodb-due-index.js';

/*
 * Schedules in the job store's table: `schedule#<id>`, with no TTL. The due index (a global
 * secondary index, projecting every attribute) is keyed by `schedShard` (`s0`..`s3`, by the id) and
 * `schedDue` (epoch seconds: the next occurrence, a claim's lapse, or NEVER_DUE when paused or
 * ended); only schedules carry those two attributes, so the index holds nothing else. Its reads are
 * eventually consistent: every decision is a conditional write on the schedule's own item.
 */

const key = (id: string): Item => ({ pk: S(`schedule#${id}`) });
const shardKey = (shard: number) => `s${shard}`;

export class DynamoSchedules implements ScheduleStore {
  readonly #t: TableRef;

  constructor(table: TableRef) {
    this.#t = table;
  }

  async putSchedule(s: { id: string; owner: string; spec: string; next: number | undefined }): Promise<PutResult> {
    for (let tries = 0; tries < 3; tries++) {
      const stored = await this.getSchedule(s.id);
      if (stored === undefined) {
        if (await this.#create(s)) return 'created';
        continue; // created meanwhile by another put: read it again
      }
      if (stored.owner !== s.owner) return 'owned-by-other';
      if (stored.spec === s.spec) return 'unchanged';
      // A new revision waits at its own next occurrence; a claim on the old one ends (its advance will not match).
      // Written only over what was read: the same revision, owner and pause (a pause meanwhile is read again).
      const u = new Update();
      const condition = [
        `${u.name('revision')} = ${u.value(N(stored.revision))}`,
        `${u.name('owner')} = ${u.value(S(stored.owner))}`,
        `${u.name('paused')} = ${u.value({ BOOL: stored.paused })}`,
      ].join(' AND ');
      u.set('spec', S(s.spec))
        .set('revision', N(stored.revision + 1))
        .set('schedDue', N(stored.paused ? NEVER_DUE : (s.next ?? NEVER_DUE)))
        .remove('claimBy')
        .remove('claimUntil');
      if (s.next !== undefined) u.set('next', N(s.next));
      else u.remove('next');
      if (await updateIf(this.#t, key(s.id), u, condition)) return 'updated';
    }
    throw new Error(`schedule ${s.id}: changed by others three times while it was being put`);
  }

  async #create(s: { id: string; owner: string; spec: string; next: number | undefined }): Promise<boolean> {
    const item: Item = {
      ...key(s.id),
      kind: S('schedule'),
      scheduleId: S(s.id),
      owner: S(s.owner),
      spec: S(s.spec),
      revision: N(1),
      paused: { BOOL: false },
      skipped: N(0),
      schedShard: S(shardKey(shardOf(s.id))),
      schedDue: N(s.next ?? NEVER_DUE),
      ...(s.next === undefined ? {} : { next: N(s.next) }),
    };
    return putIfAbsent(this.#t, item);
  }

  async getSchedule(id: string): Promise<ScheduleRecord | undefined> {
    const item = await readItem(this.#t, key(id));
    return item === undefined ? undefined : recordOf(item);
  }

  removeSchedule(id: string, owner?: string): Promise<boolean> {
    if (owner === undefined) return deleteIf(this.#t, key(id), 'attribute_exists(pk)');
    return deleteIf(this.#t, key(id), 'attribute_exists(pk) AND #owner = :owner', { ':owner': S(owner) }, { '#owner': 'owner' });
  }

  async listSchedules(cursor?: string): Promise<{ schedules: readonly ScheduleRecord[]; cursor: string | undefined }> {
    const at = cursor === undefined ? { shard: 0, key: undefined } : fromCursor<Cursor>(cursor);
    const page = await this.#query(at.shard, 'schedDue >= :zero', { ':zero': N(0) }, 100, at.key);
    const next: Cursor | undefined =
      page.last !== undefined
        ? { shard: at.shard, key: page.last }
        : at.shard + 1 < SCHEDULE_SHARDS
          ? { shard: at.shard + 1, key: undefined }
          : undefined;
    return {
      schedules: page.items.map(recordOf),
      cursor: next === undefined ? undefined : toCursor(next),
    };
  }

  async dueSchedules(shard: number, nowS: number, limit: number, cursor?: string) {
    const start = cursor === undefined ? undefined : fromCursor<Item>(cursor);
    const page = await this.#query(shard, 'schedDue <= :now', { ':now': N(nowS) }, limit, start);
    return {
      schedules: page.items.map(recordOf),
      cursor: page.last === undefined ? undefined : toCursor(page.last),
    };
  }

  #query(shard: number, due: string, values: Item, limit: number, start: Item | undefined) {
    return duePage(this.#t, shardKey(shard), due, values, limit, start);
  }

  claimSchedule(
    id: string,
    seen: { next: number; revision: number },
    claim: { by: string; untilS: number; nowS: number },
  ): Promise<boolean> {
    const u = new Update().set('claimBy', S(claim.by)).set('claimUntil', N(claim.untilS)).set('schedDue', N(claim.untilS));
    const until = u.name('claimUntil');
    const condition = [
      `${u.name('revision')} = ${u.value(N(seen.revision))}`,
      `${u.name('next')} = ${u.value(N(seen.next))}`,
      `${u.name('paused')} = ${u.value({ BOOL: false })}`,
      `(attribute_not_exists(${until}) OR ${until} <= ${u.value(N(claim.nowS))})`,
    ].join(' AND ');
    return updateIf(this.#t, key(id), u, condition);
  }

  async advanceSchedule(
    id: string,
    claim: { by: string; from: number; revision: number },
    to: { next: number | undefined; lastFired: number | undefined; skipped: number },
  ): Promise<boolean> {
    // Paused meanwhile: it advances all the same, and stays out of the due index until resumed.
    for (const paused of [false, true]) {
      const u = new Update();
      const condition = [
        `${u.name('claimBy')} = ${u.value(S(claim.by))}`,
        `${u.name('next')} = ${u.value(N(claim.from))}`,
        `${u.name('revision')} = ${u.value(N(claim.revision))}`,
        `${u.name('paused')} = ${u.value({ BOOL: paused })}`,
      ].join(' AND ');
      if (to.next !== undefined) u.set('next', N(to.next));
      else u.remove('next');
      if (to.lastFired !== undefined) u.set('lastFired', N(to.lastFired));
      if (!paused) u.set('schedDue', N(to.next ?? NEVER_DUE));
      if (to.skipped > 0) u.add('skipped', to.skipped);
      u.remove('claimBy').remove('claimUntil');
      if (await updateIf(this.#t, key(id), u, condition)) return true;
    }
    return false;
  }

  pause(id: string): Promise<boolean> {
    const u = new Update().set('paused', { BOOL: true }).set('schedDue', N(NEVER_DUE));
    return updateIf(this.#t, key(id), u, 'attribute_exists(pk)');
  }

  resume(id: string, seen: { revision: number }, next: number | undefined): Promise<boolean> {
    const u = new Update();
    const condition = `${u.name('revision')} = ${u.value(N(seen.revision))}`;
    u.set('paused', { BOOL: false }).set('schedDue', N(next ?? NEVER_DUE));
    if (next !== undefined) u.set('next', N(next));
    else u.remove('next');
    return updateIf(this.#t, key(id), u, condition);
  }
}

interface Cursor {
  readonly shard: number;
  readonly key: Item | undefined;
}

function recordOf(item: Item): ScheduleRecord {
  const num = (name: string) => (item[name]?.N === undefined ? undefined : Number(item[name].N));
  const by = item.claimBy?.S;
  const until = num('claimUntil');
  return {
    id: item.scheduleId?.S ?? '',
    owner: item.owner?.S ?? '',
    spec: item.spec?.S ?? '{}',
    revision: num('revision') ?? 0,
    next: num('next'),
    paused: item.paused?.BOOL === true,
    lastFired: num('lastFired'),
    skipped: num('skipped') ?? 0,
    claim: by === undefined || until === undefined ? undefined : { by, untilS: until },
  };
}
