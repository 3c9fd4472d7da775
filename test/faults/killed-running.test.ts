import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { depth, drainBodies, executions, freshPair, logLines, named, send, spawnWorker, stopWorker, workspace } from './harness.js';

/*
 * A worker SIGKILLed under a running job, again and again, on a queue whose redrive policy allows 3
 * receives: each kill costs the job one attempt (the redelivery that finds its job id still
 * "running" under the dead worker is not counted), and a job whose worker dies on every attempt
 * ends in the DLQ with the worker's reason after its 3 attempts, instead of being moved there by
 * SQS without one or coming back for ever.
 */

const MAX_RECEIVES = 3;

/** The attempts of `jobId`'s starts so far, from the workers' TRACE_LOG. */
const starts = (trace: string, jobId: string): number[] =>
  logLines(trace)
    .map((l) => l.split(' '))
    .filter((f) => f[2] === 'job:start' && f[3] === jobId)
    .map((f) => Number(f[4]));

/**
 * Run one worker at a time on the queue; SIGKILL it as soon as it starts `jobId` while fewer than
 * `kills` kills are done, then start another. Ends when `done()` says so (or after `deadlineMs`),
 * stopping the last worker with SIGTERM. Returns the kills made.
 */
async function killOnStart(
  env: Record<string, string>,
  jobId: string,
  kills: number,
  done: () => Promise<boolean>,
  deadlineMs: number,
): Promise<number> {
  const until = Date.now() + deadlineMs;
  let killed = 0;
  let worker = spawnWorker(env);
  try {
    while (Date.now() < until) {
      if (killed < kills && starts(env.TRACE_LOG!, jobId).length > killed) {
        worker.child.kill('SIGKILL');
        await worker.exited;
        killed++;
        worker = spawnWorker(env);
        continue;
      }
      if (await done()) break;
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await stopWorker(worker);
  }
  return killed;
}

/** A queue allowing MAX_RECEIVES receives holding one 2.5 s job, and the env of the one worker at a time that runs it. */
async function oneJob(name: string, prefix: string) {
  named(name);
  const { queueUrl, dlqUrl } = await freshPair(prefix, 5, MAX_RECEIVES);
  const ws = workspace(name);
  const trace = `${ws.dir}/trace.log`;
  const jobId = `${prefix}-${randomUUID().slice(0, 8)}`;
  await send(queueUrl, [{ id: jobId, ms: 2_500 }]);
  const env = {
    QUEUE_URL: queueUrl,
    EFFECTS_LOG: ws.effects,
    LOCK_PREFIX: ws.lockPrefix,
    CONCURRENCY: '1',
    VISIBILITY: '5',
    TRACE_LOG: trace,
  };
  return { queueUrl, dlqUrl, ws, trace, jobId, env };
}

it('a job whose worker is killed under it twice, with 3 receives allowed, still runs to its end: each kill costs one receive', async () => {
  const { queueUrl, dlqUrl, ws, trace, jobId, env } = await oneJob('killed-running', 'killed');
  // Its effect seen, and nothing of it left in the queue (a copy re-sent meanwhile ends as a duplicate).
  const ran = async () => {
    const q = await depth(queueUrl);
    return executions(ws.effects).has(jobId) && q.visible + q.inFlight + q.delayed === 0;
  };
  const kills = await killOnStart(env, jobId, 2, ran, 150_000);
  const dead = await drainBodies(dlqUrl);
  const events = logLines(trace).map((l) => l.split(' ').slice(2, 5).join(' '));
  expect(kills, events.join('\n')).toBe(2);
  expect(starts(trace, jobId), events.join('\n')).toEqual([1, 2, 3]);
  expect(executions(ws.effects).get(jobId), events.join('\n')).toBe(1);
  expect(dead, events.join('\n')).toEqual([]);
}, 240_000);

it('a job whose worker is killed under it on every attempt ends in the DLQ with the reason after its 3 unfinished runs, not in a loop', async () => {
  const { dlqUrl, ws, trace, jobId, env } = await oneJob('killed-every-time', 'killer');
  const inDlq = async () => (await depth(dlqUrl)).visible > 0;
  // Up to 6 kills: a job still started after its 3rd would be looping.
  const kills = await killOnStart(env, jobId, 2 * MAX_RECEIVES, inDlq, 150_000);
  const dead = await drainBodies(dlqUrl);
  const events = logLines(trace).map((l) => l.split(' ').slice(2, 5).join(' '));
  expect(starts(trace, jobId), events.join('\n')).toEqual([1, 2, 3]);
  expect(kills).toBe(MAX_RECEIVES);
  expect(dead, events.join('\n')).toHaveLength(1);
  expect(dead[0]!.attributes['sqsjobs-dlq-reason']).toBe('retries-exhausted');
  expect(dead[0]!.attributes['sqsjobs-dlq-error']).toContain(`${MAX_RECEIVES} runs never finished`);
  expect(executions(ws.effects).has(jobId)).toBe(false);
}, 240_000);
