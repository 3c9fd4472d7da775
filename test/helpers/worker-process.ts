import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { LOCAL_ENV, eventually, queueCounts, sqsClient } from './stack.js';

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

/**
 * `sqs-jobs worker` from this checkout's sources (`node --import tsx src/cli/main.ts worker ...args`,
 * for the reason above), run until `queueUrl` holds nothing, then stopped with SIGTERM: answers its
 * exit code and everything it printed.
 */
export async function runCliWorkerUntilEmpty(
  args: readonly string[],
  env: Record<string, string | undefined>,
  queueUrl: string,
): Promise<{ code: number | null; logs: string }> {
  const worker = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'worker', ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let logs = '';
  worker.stdout.on('data', (d: Buffer) => {
    logs += d.toString();
  });
  worker.stderr.on('data', (d: Buffer) => {
    logs += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => worker.on('exit', (code) => resolve(code)));
  const sqs = sqsClient();
  try {
    await eventually(
      async () => {
        const c = await queueCounts(sqs, queueUrl);
        return c.visible === 0 && c.inFlight === 0;
      },
      `the worker ran the job (logs: ${logs})`,
      30_000,
    );
  } finally {
    worker.kill('SIGTERM');
    sqs.destroy();
  }
  return { code: await exited, logs };
}
