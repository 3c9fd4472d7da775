import { expect, it } from 'vitest';
import {
  account,
  killLoop,
  freshPair,
  named,
  pick,
  send,
  settled,
  spawnWorker,
  stopWorker,
  workspace,
  type WorkerProcess,
} from './harness.js';

it('SIGKILLed workers, restarted: every job ends completed or dead-lettered, none lost', async () => {
  named('crash');
  const jobs = pick(2_000, 20_000);
  const killEveryMs = pick(1_000, 3_000);
  const { queueUrl, dlqUrl } = await freshPair('crash', 5);
  const ws = workspace('crash');
  // 100-300 ms jobs: 40 at a time, the run spans many kills (about 10 s at CI scale, 100 s in full).
  const ids = Array.from({ length: jobs }, (_, i) => ({ id: `crash-${ws.lockPrefix.slice(13, 21)}-${i}`, ms: 100 + ((i * 7919) % 200) }));
  await send(queueUrl, ids);
  const env = { QUEUE_URL: queueUrl, EFFECTS_LOG: ws.effects, LOCK_PREFIX: ws.lockPrefix, CONCURRENCY: '10', VISIBILITY: '5' };
  const workers: WorkerProcess[] = Array.from({ length: 4 }, () => spawnWorker(env));
  await Promise.all(workers.map((w) => w.ready));

  const killer = killLoop(workers, env, killEveryMs);
  const idSet = new Set(ids.map((j) => j.id));
  // Keep killing while most of the work is done, then let the survivors finish.
  await settled(queueUrl, dlqUrl, new Set([...idSet].slice(0, Math.floor(jobs * 0.8))), ws.effects, pick(120_000, 600_000));
  const kills = await killer.stop();
  const done = await settled(queueUrl, dlqUrl, idSet, ws.effects, pick(120_000, 600_000));
  const exitCodes = await Promise.all(workers.map((w) => stopWorker(w)));
  const report = await account(idSet, ws.effects, dlqUrl, { kills, workers: 4 });
  expect(kills).toBeGreaterThanOrEqual(pick(4, 20)); // the faults really happened
  expect(done).toBe(true);
  expect(exitCodes).toEqual([0, 0, 0, 0]);
  expect(report.lost).toBe(0);
  expect(report.completed + report.deadLettered).toBeGreaterThanOrEqual(jobs);
  // A kill between a handler's effect and the lock's "done" mark can run that job once more
  // (at-least-once); such repeats are counted and must stay rare: at most one per kill.
  expect(report.completedTwice).toBeLessThanOrEqual(kills);
}, 1_500_000);
