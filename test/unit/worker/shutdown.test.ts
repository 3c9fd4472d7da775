import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob } from '../../../src/core/job.js';
import { Activity } from '../../../src/worker/activity.js';
import type { Abortable, AbortCode } from '../../../src/worker/hold/lease.js';
import { ReceiveCapacity } from '../../../src/worker/intake/capacity.js';
import { shutdown } from '../../../src/worker/shutdown.js';
import { type InMemoryWorker, inMemoryWorker } from '../../helpers/worker-context.js';

/* The graceful stop, step by step, on the in-memory parts. */

const step = defineJob({ name: 'step', args: z.object({}), handle: () => {} });

let w: InMemoryWorker;
afterEach(() => w.close());

/** A running handler that ends when aborted (or when `finish` is called). */
function handler(activity: Activity) {
  const aborts: AbortCode[] = [];
  const controller = new AbortController();
  const h: Abortable = {
    signal: controller.signal,
    abort: (code) => {
      aborts.push(code);
      controller.abort();
      activity.ended(h);
    },
  };
  activity.started(h);
  return { aborts, finish: () => activity.ended(h) };
}

describe('shutdown', () => {
  it('hands back first, lets running handlers finish within the deadline, waits for settles, then closes in order', async () => {
    w = await inMemoryWorker([step], { options: { shutdownTimeoutMs: 5_000 } });
    const activity = new Activity(2, w.ctx.report.onError);
    const order: string[] = [];
    const running = handler(activity);
    let settled = false;
    activity.follow(
      new Promise<void>((r) => setTimeout(r, 50)).then(() => {
        settled = true;
      }),
    );
    setTimeout(() => {
      order.push('handler finished');
      running.finish();
    }, 100);
    await shutdown(w.ctx, {
      capacity: new ReceiveCapacity({ concurrency: 10, prefetch: 0 }, { running: () => 0, buffered: () => 0 }),
      activity,
      handBackBuffered: async () => void order.push('hand back'),
      pollers: () => [],
      close: [['close', () => order.push(`close (settled: ${settled})`)]],
    });
    expect(order).toEqual(['hand back', 'handler finished', 'close (settled: true)']);
    expect(running.aborts).toEqual([]);
    expect(w.ctx.stop.signal.aborted).toBe(true);
    expect(w.ctx.force.signal.aborted).toBe(true);
  });

  it('aborts handlers still running at the deadline with SHUTDOWN', async () => {
    w = await inMemoryWorker([step], { options: { shutdownTimeoutMs: 100 } });
    const activity = new Activity(2, w.ctx.report.onError);
    const stuck = handler(activity);
    await shutdown(w.ctx, {
      capacity: new ReceiveCapacity({ concurrency: 10, prefetch: 0 }, { running: () => 0, buffered: () => 0 }),
      activity,
      handBackBuffered: async () => {},
      pollers: () => [],
      close: [],
    });
    expect(stuck.aborts).toEqual(['SHUTDOWN']);
    expect(activity.running.size).toBe(0);
  });

  it('reports a step that fails and runs the next', async () => {
    w = await inMemoryWorker([step]);
    const activity = new Activity(2, w.ctx.report.onError);
    const ran: string[] = [];
    await shutdown(w.ctx, {
      capacity: new ReceiveCapacity({ concurrency: 10, prefetch: 0 }, { running: () => 0, buffered: () => 0 }),
      activity,
      handBackBuffered: async () => {
        throw new Error('SQS down');
      },
      pollers: () => [],
      close: [
        [
          'flush',
          () => {
            throw new Error('boom');
          },
        ],
        ['close lock', () => ran.push('close lock')],
      ],
    });
    expect(w.errors).toEqual(['shutdown: hand back unstarted messages', 'shutdown: flush']);
    expect(ran).toEqual(['close lock']);
  });
});
