import { NEVER_DUE, type PutResult, SCHEDULE_SHARDS, type ScheduleRecord, type ScheduleStore, shardOf } from '../ports/schedule-store.js';

type Stored = { -readonly [K in keyof ScheduleRecord]: ScheduleRecord[K] } & { due: number };

/**
 * Schedules in memory, with the rules DynamoDB's conditions keep (test/contracts/schedule-store-port.test.ts
 * runs both): one claim at a time, lapsing at its time; an advance only under its claim; a new
 * revision ends a claim on the old one. Its due reads are current (DynamoDB's may lag).
 */
export class MemorySchedules implements ScheduleStore {
  readonly #items = new Map<string, Stored>();

  async putSchedule(s: { id: string; owner: string; spec: string; next: number | undefined }): Promise<PutResult> {
    const stored = this.#items.get(s.id);
    if (stored === undefined) {
      const fresh = { id: s.id, owner: s.owner, spec: s.spec, revision: 1, next: s.next, paused: false, lastFired: undefined };
      this.#items.set(s.id, { ...fresh, skipped: 0, claim: undefined, due: s.next ?? NEVER_DUE });
      return 'created';
    }
    if (stored.owner !== s.owner) return 'owned-by-other';
    if (stored.spec === s.spec) return 'unchanged';
    Object.assign(stored, { spec: s.spec, revision: stored.revision + 1, next: s.next, claim: undefined });
    stored.due = stored.paused ? NEVER_DUE : (s.next ?? NEVER_DUE);
    return 'updated';
  }

  async getSchedule(id: string): Promise<ScheduleRecord | undefined> {
    return this.#copy(this.#items.get(id));
  }

  async removeSchedule(id: string, owner?: string): Promise<boolean> {
    const stored = this.#items.get(id);
    if (stored === undefined || (owner !== undefined && stored.owner !== owner)) return false;
    return this.#items.delete(id);
  }

  async listSchedules(cursor?: string): Promise<{ schedules: readonly ScheduleRecord[]; cursor: string | undefined }> {
    const shard = cursor === undefined ? 0 : Number(cursor);
    const schedules = this.#inShard(shard).map((s) => this.#copy(s)!);
    return { schedules, cursor: shard + 1 < SCHEDULE_SHARDS ? String(shard + 1) : undefined };
  }

  async dueSchedules(shard: number, nowS: number, limit: number, cursor?: string) {
    // As DynamoDB pages: after the last item's key (due, id), whatever moved meanwhile.
    const after = cursor === undefined ? undefined : (JSON.parse(cursor) as [number, string]);
    const due = this.#inShard(shard).filter((s) => s.due <= nowS && (after === undefined || byKey(s, after) > 0));
    const page = due.slice(0, limit);
    const last = page.at(-1);
    return {
      schedules: page.map((s) => this.#copy(s)!),
      cursor: due.length > limit && last !== undefined ? JSON.stringify([last.due, last.id]) : undefined,
    };
  }

  async claimSchedule(id: string, seen: { next: number; revision: number }, claim: { by: string; untilS: number; nowS: number }) {
    const s = this.#items.get(id);
    if (s === undefined || s.revision !== seen.revision || s.next !== seen.next || s.paused) return false;
    if (s.claim !== undefined && s.claim.untilS > claim.nowS) return false;
    s.claim = { by: claim.by, untilS: claim.untilS };
    s.due = claim.untilS;
    return true;
  }

  async advanceSchedule(
    id: string,
    claim: { by: string; from: number; revision: number },
    to: { next: number | undefined; lastFired: number | undefined; skipped: number },
  ): Promise<boolean> {
    const s = this.#items.get(id);
    if (s === undefined || s.claim?.by !== claim.by || s.next !== claim.from || s.revision !== claim.revision) return false;
    Object.assign(s, { next: to.next, lastFired: to.lastFired ?? s.lastFired, skipped: s.skipped + to.skipped, claim: undefined });
    if (!s.paused) s.due = to.next ?? NEVER_DUE;
    return true;
  }

  async pause(id: string): Promise<boolean> {
    const s = this.#items.get(id);
    if (s === undefined) return false;
    s.paused = true;
    s.due = NEVER_DUE;
    return true;
  }

  async resume(id: string, seen: { revision: number }, next: number | undefined): Promise<boolean> {
    const s = this.#items.get(id);
    if (s === undefined || s.revision !== seen.revision) return false;
    Object.assign(s, { paused: false, next, due: next ?? NEVER_DUE });
    return true;
  }

  /** A shard's schedules in the due index's order (due, then id). */
  #inShard(shard: number): Stored[] {
    return [...this.#items.values()].filter((s) => shardOf(s.id) === shard).sort((a, b) => byKey(a, [b.due, b.id]));
  }

  #copy(s: Stored | undefined): ScheduleRecord | undefined {
    if (s === undefined) return undefined;
    const { due: _due, ...record } = s;
    return { ...record, claim: s.claim === undefined ? undefined : { ...s.claim } };
  }
}

/** Where `s` stands against the index key `[due, id]`: negative before it, positive after. */
function byKey(s: Stored, [due, id]: readonly [number, string]): number {
  return s.due - due || (s.id < id ? -1 : s.id > id ? 1 : 0);
}
