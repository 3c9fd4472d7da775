import { z } from 'zod';
import { ConfigError } from '../core/errors.js';
import { defineJob } from '../core/job.js';
import type { ScheduleRecord, ScheduleStore } from '../ports/schedule-store.js';
import type { JobStore } from '../ports/job-store.js';
import type { Producer } from '../producer/producer.js';
import type { ScheduleDefinition } from '../schedules/define.js';
import { firstDue } from '../schedules/catch-up.js';
import { type Plan, planOf, storedSpec } from '../schedules/stored.js';
import { occurrenceJobId } from '../core/envelope.js';
import { type ScheduleView, viewOf } from './schedule-view.js';

/** Who puts schedules made at run time (`upsert`); sync's are `app:<name>`. */
export const RUNTIME_OWNER = 'runtime';

/** What a sync did (or, dry, would do) to one schedule. */
export interface SyncChange {
  readonly id: string;
  readonly change: 'created' | 'updated' | 'unchanged' | 'removed';
}

const nowS = () => Math.floor(Date.now() / 1000);
const appSchema = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/, 'must be 1-64 letters, digits, _ . - (an app name, such as billing)');

/**
 * Schedules in the job store, steered: put (by the app's declarations, `sync`, or one at a time at
 * run time, `upsert`), read, paused, resumed, triggered and removed. Workers only fire them.
 */
export class Schedules {
  readonly #store: ScheduleStore;
  readonly #producer: (queueUrl: string) => Producer;
  readonly #queueUrl: () => string;
  readonly #close: () => void;

  constructor(o: { store: JobStore; producer: (queueUrl: string) => Producer; queueUrl: () => string; close: () => void }) {
    if (o.store.schedules === undefined) throw new ConfigError('invalid schedules options: store: this job store keeps no schedules');
    this.#store = o.store.schedules;
    this.#producer = o.producer;
    this.#queueUrl = o.queueUrl;
    this.#close = o.close;
  }

  /**
   * Create a schedule at run time, or change it: it fires from its next occurrence (from its
   * `start` when that was at most a minute ago), never one it fired (firstDue). The same definition again changes nothing. A schedule
   * an app declared (`sync`) is refused: change it there.
   */
  async upsert(def: ScheduleDefinition, options: { queueUrl?: string } = {}): Promise<'created' | 'updated' | 'unchanged'> {
    const result = await this.#put(def, RUNTIME_OWNER, options.queueUrl);
    if (result === 'owned-by-other') {
      const owner = (await this.#store.getSchedule(def.id))?.owner ?? 'another owner';
      throw new ConfigError(`schedule ${def.id} is ${owner}'s (declared in code, put by \`sqs-jobs schedules sync\`): change it there`);
    }
    return result;
  }

  /**
   * Put an app's declared schedules: create or update each, and remove the schedules of the same
   * app it no longer declares (never another app's, never run-time ones). `dryRun`: say, write nothing.
   */
  async sync(defs: readonly ScheduleDefinition[], options: { app: string; dryRun?: boolean; queueUrl?: string }): Promise<SyncChange[]> {
    const app = appSchema.safeParse(options.app);
    if (!app.success) throw new ConfigError(`invalid sync options: app: ${app.error.issues[0]!.message}`);
    const owner = `app:${app.data}`;
    const ids = new Set<string>();
    for (const d of defs) {
      if (ids.has(d.id)) throw new ConfigError(`schedule ${d.id} is declared twice`);
      ids.add(d.id);
    }
    const changes: SyncChange[] = [];
    for (const d of defs) {
      const stored = await this.#store.getSchedule(d.id);
      if (stored !== undefined && stored.owner !== owner)
        throw new ConfigError(`schedule ${d.id} is ${stored.owner}'s already: give this one another id`);
      if (options.dryRun === true) {
        const spec = storedSpec(d, options.queueUrl ?? this.#queueUrl());
        changes.push({ id: d.id, change: stored === undefined ? 'created' : stored.spec === spec ? 'unchanged' : 'updated' });
        continue;
      }
      const result = await this.#put(d, owner, options.queueUrl);
      if (result === 'owned-by-other') throw new ConfigError(`schedule ${d.id} was put by another owner meanwhile`);
      changes.push({ id: d.id, change: result });
    }
    for await (const r of this.#all()) {
      if (r.owner !== owner || ids.has(r.id)) continue;
      if (options.dryRun === true || (await this.#store.removeSchedule(r.id, owner))) changes.push({ id: r.id, change: 'removed' });
    }
    return changes;
  }

  /** The schedule, as `sqs-jobs schedules show` shows it; undefined when there is none. */
  async get(id: string): Promise<ScheduleView | undefined> {
    const r = await this.#store.getSchedule(id);
    return r === undefined ? undefined : viewOf(r);
  }

  /** A page of schedules (`cursor`: the last page's; undefined after the last), never empty before the last. */
  async list(cursor?: string): Promise<{ readonly schedules: readonly ScheduleView[]; readonly cursor: string | undefined }> {
    let page = await this.#store.listSchedules(cursor);
    // An empty shard: read on.
    while (page.schedules.length === 0 && page.cursor !== undefined) page = await this.#store.listSchedules(page.cursor);
    return { schedules: page.schedules.map(viewOf), cursor: page.cursor };
  }

  /** Fires nothing until resumed. False: no such schedule. */
  pause(id: string): Promise<boolean> {
    return this.#store.pause(id);
  }

  /** Fires again from its next occurrence after now (the ones missed while paused are not caught up). False: no such schedule. */
  async resume(id: string): Promise<boolean> {
    for (let tries = 0; tries < 3; tries++) {
      const r = await this.#store.getSchedule(id);
      if (r === undefined) return false;
      const plan = planOf(r.spec);
      if (typeof plan === 'string') throw new ConfigError(`schedule ${id} cannot be resumed: ${plan}`);
      if (await this.#store.resume(id, { revision: r.revision }, plan.occurrences.next(nowS() - 1))) return true;
    }
    throw new Error(`schedule ${id}: changed by others three times while it was being resumed`);
  }

  /**
   * Send its job now, as the occurrence of this second (`<id>:<epoch seconds>`: an occurrence due
   * in the same second runs once with it). Its next occurrence is unchanged. Undefined: no such schedule.
   */
  async trigger(id: string): Promise<{ readonly jobId: string } | undefined> {
    const r = await this.#store.getSchedule(id);
    if (r === undefined) return undefined;
    const plan = planOf(r.spec);
    if (typeof plan === 'string') throw new ConfigError(`schedule ${id} cannot be triggered: ${plan}`);
    const jobId = occurrenceJobId(id, nowS());
    await this.#producer(plan.queueUrl).enqueue(sendable(plan), plan.args, { jobId, track: true });
    return { jobId };
  }

  /** False: there was no such schedule. */
  remove(id: string): Promise<boolean> {
    return this.#store.removeSchedule(id);
  }

  /** Free the clients it made (a store passed as `store` is yours to close). */
  close(): void {
    this.#close();
  }

  async #put(def: ScheduleDefinition, owner: string, queueUrl: string | undefined) {
    const spec = storedSpec(def, queueUrl ?? this.#queueUrl());
    const lastFired = (await this.#store.getSchedule(def.id))?.lastFired;
    return this.#store.putSchedule({ id: def.id, owner, spec, next: firstDue(def.occurrences, nowS(), def.startS, lastFired) });
  }

  async *#all(): AsyncGenerator<ScheduleRecord> {
    let cursor: string | undefined;
    do {
      const page = await this.#store.listSchedules(cursor);
      yield* page.schedules;
      cursor = page.cursor;
    } while (cursor !== undefined);
  }
}

/**
 * The job a stored schedule sends, for the producer: its name and args as stored. The args were
 * checked against the job's schema when the schedule was put; the worker that runs it checks them again.
 */
function sendable(plan: Plan) {
  return defineJob({
    name: plan.job,
    args: z.unknown(),
    handle: () => {
      throw new Error('a schedule only sends this job');
    },
  });
}
