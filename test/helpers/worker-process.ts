import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { LOCAL_ENV } from './stack.js';

/** One line a worker process printed (test/fixtures/worker-process.ts). */
export interface WorkerLine {
  readonly event: string;
  readonly jobId?: string;
  readonly at?: number;
  readonly attempt?: number;
  readonly limit?: string;
  readonly signalListeners?: number;
}

/**
 * A worker in its own process on the local stack. It runs as `node --import tsx`, not through the
 * tsx command: that one relays a signal to its child and, when the child has not acknowledged it
 * within 30 ms (a loaded machine), sends it again and then SIGKILLs it, so the process exits 130
 * instead of stopping as the worker would.
 */
export function spawnWorker(queueUrl: string, env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/worker-process.ts'], {
    env: { ...process.env, ...LOCAL_ENV, QUEUE_URL: queueUrl, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines: WorkerLine[] = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    try {
      lines.push(JSON.parse(line));
    } catch {
      // not ours
    }
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, lines, exited, count: (event: string) => lines.filter((l) => l.event === event).length };
}
