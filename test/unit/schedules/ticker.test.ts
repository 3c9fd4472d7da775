import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob } from '../../../src/core/job.js';
import { tickRotaOn } from '../../../src/fleet/tick-rota.js';
import { shardOf } from '../../../src/ports/schedule-store.js';
import { defineSchedule } from '../../../src/schedules/define.js';
import { storedSpec } from '../../../src/schedules/stored.js';
import { tickShard } from '../../../src/schedules/tick.js';
import { runTicker, type TickerPorts } from '../../../src/schedules/ticker.js';
import { MemoryKeyValues } from '../../../src/testing/memory-key-values.js';
import { MemorySchedules } from '../../../src/testing/memory-schedules.js';
import { eventually } from '../../helpers/stack.js';

const QUEUE = 'http://127.0.0.1:4566/000000000000/jobs';
const jobA = defineJob({ name: 'job-a', args: z.object({}), handle: () => {} });
const jobB = defineJob({ name: 'job-b', args: z.object({}), handle: () => {} });

/** A worker's ticker ports over `store` and a shared rota, with the jobs it has; its sends recorded. */
function worker(store: MemorySchedules, kv: MemoryKeyValues, jobs: string[], stop: AbortSignal, sent: string[]): TickerPorts {
  return {
    store,
    rota: tickRotaOn(kv, (name) => name),
    jobs: jobs.join(','),
    signal: stop,
    me: jobs.join(','),
    staleRunningS: 60,
    now: () => Math.floor(Date.now() / 1000),
    nowMs: () => Date.now(),
    has: (job) => jobs.includes(job),
    send: async (o) => {
      sent.push(o.jobId);
      return undefined;
    },
    stateOf: async () => undefined,
    held: async () => false,
    onProblem: (id, problem) => {
      throw new Error(`${id}: ${problem}`);
    },
    onTick: () => {},
    timed: undefined,
    sendMessage: async () => {},
    onUnsent: () => {},
    onTimedSent: () => {},
    onError: (error) => {
      throw error;
    },
  };
}

describe('the ticker', () => {
  it('fires the schedules of workers with other jobs too: turns are taken among workers with the same jobs', async () => {
    const store = new MemorySchedules();
    const kv = new MemoryKeyValues();
    const nowS = Math.floor(Date.now() / 1000);
    for (const [id, job] of [
      ['a-every', jobA],
      ['b-every', jobB],
    ] as const) {
      const def = defineSchedule({ id, job, args: {}, every: '1s', start: new Date(nowS * 1000) });
      await store.putSchedule({ id, owner: 'runtime', spec: storedSpec(def, QUEUE), next: nowS });
    }
    const stop = new AbortController();
    const sent: string[] = [];
    // Three workers of app A (one asks first each second), one of app B.
    const tickers = [['job-a'], ['job-a'], ['job-a'], ['job-b']].map((jobs) => runTicker(worker(store, kv, jobs, stop.signal, sent)));
    await eventually(
      () => sent.filter((id) => id.startsWith('b-every:')).length >= 2 && sent.some((id) => id.startsWith('a-every:')),
      'both fired',
    );
    stop.abort();
    await Promise.all(tickers);
    for (const prefix of ['a-every:', 'b-every:']) {
      const mine = sent.filter((id) => id.startsWith(prefix));
      expect(new Set(mine).size).toBe(mine.length); // each occurrence once
    }
  });

  it('a shard with more due than one tick fires is ticked again at once, ten schedules fired at a time', async () => {
    const store = new MemorySchedules();
    const nowS = Math.floor(Date.now() / 1000);
    const ids: string[] = [];
    for (let n = 0; ids.length < 250; n++) if (shardOf(`t${n}:digest`) === 0) ids.push(`t${n}:digest`);
    for (const id of ids) {
      const def = defineSchedule({ id, job: jobA, args: {}, every: '7d', start: new Date(nowS * 1000), overlap: 'allow' });
      await store.putSchedule({ id, owner: 'runtime', spec: storedSpec(def, QUEUE), next: nowS });
    }
    const sent: string[] = [];
    const p = worker(store, new MemoryKeyValues(), ['job-a'], new AbortController().signal, sent);
    let inFlight = 0;
    let most = 0;
    const ports = {
      ...p,
      send: async (o: { jobId: string }) => {
        most = Math.max(most, ++inFlight);
        await new Promise((r) => setTimeout(r, 1));
        inFlight--;
        sent.push(o.jobId);
        return undefined;
      },
    };
    expect((await tickShard(ports, 0)).full).toBe(true);
    expect(sent).toHaveLength(100);
    expect(most).toBe(10);
    expect((await tickShard(ports, 0)).full).toBe(true);
    expect((await tickShard(ports, 0)).full).toBe(false);
    expect(new Set(sent)).toEqual(new Set(ids.map((id) => `${id}:${nowS}`)));
  });
});
