import { expect, it } from 'vitest';
import { account, executions, freshPair, named, pick, send, settled, spawnWorker, stopWorker, workspace } from './harness.js';

it('jobs sent twice with the same job id run once', async () => {
  named('duplicates');
  const jobs = pick(1_000, 10_000);
  const { queueUrl, dlqUrl } = await freshPair('dupes', 5);
  const ws = workspace('dupes');
  const all = Array.from({ length: jobs }, (_, i) => ({ id: `dup-${ws.lockPrefix.slice(14, 22)}-${i}`, ms: (i * 13) % 30 }));
  const twice = all.filter((_, i) => i % 20 === 0); // 5%
  // Copies go in at once (a producer retrying) and later (a redelivery), mixed into the stream.
  await send(queueUrl, [...all, ...twice.slice(0, twice.length / 2)]);
  // The workers wait 2 s for memcached: on a loaded 2-core machine a call can take over the
  // suite's 200 ms (x4 deadline), which reads as memcached down, and then a job runs without the
  // lock by design (fail open; test/faults/memcached-outage.test.ts covers that). This test is
  // about the lock deciding, not about memcached's latency.
  const workers = [1, 2].map(() =>
    spawnWorker({
      QUEUE_URL: queueUrl,
      EFFECTS_LOG: ws.effects,
      LOCK_PREFIX: ws.lockPrefix,
      CONCURRENCY: '10',
      VISIBILITY: '5',
      LOCK_TIMEOUT_MS: '2000',
    }),
  );
  await Promise.all(workers.map((w) => w.ready));
  await send(queueUrl, twice.slice(twice.length / 2));
  const done = await settled(queueUrl, dlqUrl, new Set(all.map((j) => j.id)), ws.effects, pick(120_000, 600_000));
  await new Promise((r) => setTimeout(r, 2_000));
  await Promise.all(workers.map((w) => stopWorker(w)));
  const runs = executions(ws.effects);
  const report = await account(new Set(all.map((j) => j.id)), ws.effects, dlqUrl, {
    sentTwice: twice.length,
    maxRunsPerId: Math.max(...runs.values()),
  });
  expect(done).toBe(true);
  expect(report.lost).toBe(0);
  expect(report.completedTwice).toBe(0);
  expect(Math.max(...runs.values())).toBe(1);
}, 900_000);
