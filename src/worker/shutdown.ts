import type { Logger } from 'pino';
import { sleep } from '../core/sleep.js';
import type { ReceiveCapacity } from './intake/capacity.js';
import type { Activity } from './activity.js';
import type { WorkerContext } from './context.js';

/** What the graceful stop acts on besides the context. */
export interface Stopping {
  readonly capacity: ReceiveCapacity;
  readonly activity: Activity;
  /** Hand back what was received and not started (and flush or hand back held batches). */
  readonly handBackBuffered: () => Promise<void>;
  readonly pollers: () => readonly Promise<void>[];
  /** Closing steps, in order, after every message is settled. */
  readonly close: readonly (readonly [string, () => unknown])[];
}

/**
 * The graceful stop: stop receiving, hand back unstarted messages, let running handlers finish
 * until `shutdownTimeoutMs`, then abort them (SHUTDOWN); abort open long polls (whatever one
 * brought meanwhile is handed back), wait for every settle, then close. A step that fails is
 * reported and the next one runs.
 */
export async function shutdown(ctx: Pick<WorkerContext, 'config' | 'stop' | 'force' | 'report'>, p: Stopping): Promise<void> {
  ctx.stop.abort();
  p.capacity.close();
  const c = ctx.config;
  /** Wait for `work`, but no longer than `ms` or until forced. */
  const within = async (work: Promise<unknown>, ms: number) => {
    const done = new AbortController();
    await Promise.race([work, sleep(ms, AbortSignal.any([ctx.force.signal, done.signal]))]);
    done.abort();
  };
  const steps: (readonly [string, () => unknown])[] = [
    ['hand back unstarted messages', p.handBackBuffered],
    [
      'wait for running jobs',
      async () => {
        const running = p.activity.running;
        if (running.size === 0) return;
        ctx.report.log.info({ running: running.size, deadlineMs: c.shutdownTimeoutMs }, 'waiting for running jobs');
        await within(p.activity.idle(), c.shutdownTimeoutMs);
        for (const handler of running) handler.abort('SHUTDOWN', 'the worker is stopping and the shutdown deadline passed');
        await p.activity.idle();
      },
    ],
    [
      'end open polls',
      async () => {
        // Left open while handlers ran (what a poll brought was handed back at once), and aborted
        // now (unless due to end within a second): an idle worker does not wait out a 20-second
        // poll. A message SQS hands to an aborted poll is not lost: it comes back after its
        // visibility timeout, one receive spent.
        ctx.force.abort();
        // Bounded all the same: a poll let end (or a receive stuck in the network) must not hold the stop.
        const bound = new AbortController();
        const polls = Promise.allSettled(p.pollers());
        await Promise.race([polls, sleep((c.waitTimeSeconds + 10) * 1000, bound.signal)]);
        bound.abort();
      },
    ],
    [
      'settle messages',
      async () => {
        await p.activity.settled();
      },
    ],
    ...p.close,
  ];
  for (const [name, step] of steps) {
    try {
      await step();
    } catch (error) {
      ctx.report.onError(`shutdown: ${name}`, error);
    }
  }
  ctx.report.log.info('worker stopped');
}

/** SIGTERM/SIGINT stop the worker; a second signal stops it at once. Returns the remover. */
export function handleSignals(log: Logger, isStopping: () => boolean, stop: () => void, force: () => void): () => void {
  const onSignal = (signal: NodeJS.Signals) => {
    if (!isStopping()) {
      log.info({ signal }, 'stopping: no new messages, finishing running jobs');
      stop();
    } else {
      log.warn({ signal }, 'second signal: stopping now');
      force();
    }
  };
  for (const s of ['SIGTERM', 'SIGINT'] as const) process.on(s, onSignal);
  return () => {
    for (const s of ['SIGTERM', 'SIGINT'] as const) process.off(s, onSignal);
  };
}
