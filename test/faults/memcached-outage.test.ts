import { expect, it } from 'vitest';
import { PrivateMemcached } from '../helpers/memcached.js';
import { account, executions, freshPair, named, pick, runTimes, send, settled, spawnWorker, stopWorker, workspace } from './harness.js';

it('memcached killed and restarted mid-run: nothing lost, duplicate runs counted and bounded by the outage', async () => {
  named('memcached-outage');
  const jobs = pick(1_000, 10_000);
  const memcached = await PrivateMemcached.start();
  const { queueUrl, dlqUrl } = await freshPair('mcdown', 5);
  const ws = workspace('mcdown');
  const all = Array.from({ length: jobs }, (_, i) => ({ id: `mc-${ws.lockPrefix.slice(15, 23)}-${i}`, ms: 50 }));
  // 5% are sent twice, the copy a few messages behind the original, all through the run.
  const twice = all.filter((_, i) => i % 20 === 0);
  const stream = all.flatMap((job, i) => (i % 20 === 5 ? [job, all[i - 5]!] : [job]));
  await send(queueUrl, stream);
  const env = {
    QUEUE_URL: queueUrl,
    EFFECTS_LOG: ws.effects,
    LOCK_PREFIX: ws.lockPrefix,
    CONCURRENCY: '10',
    VISIBILITY: '5',
    MEMCACHED: memcached.servers,
    LOCK_LOG: `${ws.effects}.lock-unavailable`,
  };
  const workers = [1, 2].map(() => spawnWorker(env));
  await Promise.all(workers.map((w) => w.ready));
  const ids = new Set(all.map((j) => j.id));

  // Let a third of the work go through with the lock, then take memcached away for a while.
  while (executions(ws.effects).size < jobs / 3) await new Promise((r) => setTimeout(r, 100));
  const outageStartedAt = Date.now();
  await memcached.stop();
  const outageStart = executions(ws.effects).size;
  await new Promise((r) => setTimeout(r, pick(1_000, 5_000)));
  const outageEnd = executions(ws.effects).size;
  await memcached.restart();

  const done = await settled(queueUrl, dlqUrl, ids, ws.effects, pick(120_000, 600_000));
  await Promise.all(workers.map((w) => stopWorker(w)));
  await memcached.stop();
  // A pair can run twice only if it met the outage: both copies ran without the lock, or the
  // first completed before the restart wiped memcached's memory of it. Before the outage only when
  // memcached did not answer that job's claim in time (a loaded host: the worker then runs the job
  // without the lock, and says so with job:lock-unavailable).
  const doubles = [...runTimes(ws.effects)].filter(([, times]) => times.length > 1);
  const beforeOutage = doubles.filter(([, times]) => Math.max(...times) < outageStartedAt);
  const unanswered = new Set(runTimes(env.LOCK_LOG).keys());
  const unexplained = beforeOutage.filter(([id]) => !unanswered.has(id));
  const report = await account(ids, ws.effects, dlqUrl, {
    sentTwice: twice.length,
    jobsDuringOutage: outageEnd - outageStart,
    doublesBeforeOutage: beforeOutage.length,
    doublesBeforeOutageWithLockUnanswered: beforeOutage.length - unexplained.length,
  });
  expect(done).toBe(true);
  expect(report.lost).toBe(0);
  expect(report.completedTwice).toBeLessThanOrEqual(twice.length);
  expect(unexplained).toEqual([]);
}, 900_000);
