/**
 * Worker processes (worker.ts) for the bench: started with fork, answered over IPC, and every one
 * SIGKILLed when the bench exits, whatever ended it.
 */
import { type ChildProcess, fork } from 'node:child_process';
import type { Spec, Taken } from './worker.js';

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));

export interface WorkerProcess {
  /** The next message of `type` from the worker; rejects if it exits first. */
  next(type: string): Promise<Record<string, number>>;
  /** What it kept since the last take (a fleet worker). */
  take(): Promise<Taken>;
  /** Stop it gracefully (SIGKILL after 10 s) and wait for its exit. */
  stop(): Promise<void>;
}

export async function startWorker(spec: Spec): Promise<WorkerProcess> {
  const child = fork(new URL('./worker.ts', import.meta.url).pathname, [JSON.stringify(spec)], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  running.add(child);
  const waiting = new Map<string, { resolve: (m: never) => void; reject: (e: Error) => void }>();
  const early = new Map<string, unknown>(); // a message no one waits for yet
  child.on('message', (m: { type: string }) => {
    const w = waiting.get(m.type);
    if (w === undefined) early.set(m.type, m);
    else w.resolve(m as never);
    waiting.delete(m.type);
  });
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      running.delete(child);
      for (const [type, w] of waiting) w.reject(new Error(`a worker exited (${signal ?? code}) while the bench waited for '${type}'`));
      waiting.clear();
      resolve();
    }),
  );
  const next = <T>(type: string) =>
    new Promise<T>((resolve, reject) => {
      if (early.has(type)) {
        resolve(early.get(type) as T);
        early.delete(type);
      } else if (child.exitCode !== null || child.signalCode !== null)
        reject(new Error(`a worker exited while the bench asked for '${type}'`));
      else waiting.set(type, { resolve, reject });
    });
  await next('ready');
  return {
    next,
    take: () => {
      const taken = next<Taken>('taken');
      child.send({ type: 'take' });
      return taken;
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.send({ type: 'stop' });
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
