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

// Tenant caps under SIGKILL: a killed worker's slots are left to expire (lock TTL), so its tenant
// runs below its cap for a while, never stuck and never losing a job.
it('SIGKILLed workers holding capped tenants: every job ends completed, none lost, none stuck', async () => {
  named('fair-crash');
  const jobs = pick(600, 4_000);
  const { queueUrl, dlqUrl } = await freshPair('fair-crash', 5);
  const ws = workspace('fair-crash');
  const tag = ws.lockPrefix.slice(13, 21);
  // Two in three jobs are tenant A's (capped at 3 across the fleet), the rest B's (uncapped).
  const ids = Array.from({ length: jobs }, (_, i) => ({
    id: `fair-${tag}-${i}`,
    ms: 50 + ((i * 7919) % 100),
    tenant: i % 3 === 2 ? 'B' : 'A',
  }));
  await send(queueUrl, ids);
  const env = {
    QUEUE_URL: queueUrl,
    EFFECTS_LOG: ws.effects,
    LOCK_PREFIX: ws.lockPrefix,
    CONCURRENCY: '8',
    VISIBILITY: '5',
    CAPS: '{"A":3}',
  };
  const workers: WorkerProcess[] = Array.from({ length: 3 }, () => spawnWorker(env));
  await Promise.all(workers.map((w) => w.ready));

  // At most 15 kills at CI scale (a clean run makes 12-14; one that made 26 let a held job's 10
  // receives run out, SQS's redrive, not a deferral): the kills, not the pace of the machine, set the load.
  const killer = killLoop(workers, env, 1_500, undefined, true, pick(15, 120));
  const idSet = new Set(ids.map((j) => j.id));
  await settled(queueUrl, dlqUrl, new Set([...idSet].slice(0, Math.floor(jobs * 0.5))), ws.effects, pick(180_000, 600_000));
  const kills = await killer.stop();
  const done = await settled(queueUrl, dlqUrl, idSet, ws.effects, pick(180_000, 600_000));
  const exitCodes = await Promise.all(workers.map((w) => stopWorker(w)));
  const report = await account(idSet, ws.effects, dlqUrl, { kills, workers: 3 });
  expect(kills).toBeGreaterThanOrEqual(2);
  expect(done).toBe(true);
  expect(exitCodes).toEqual([0, 0, 0]);
  expect(report.lost).toBe(0);
  expect(report.deadLettered).toBe(0); // a deferral never spends the receive budget
  expect(report.completedTwice).toBeLessThanOrEqual(kills);
}, 1_500_000);
