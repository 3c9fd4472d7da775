import { expect, it } from 'vitest';
import { account, freshPair, named, pick, send, settled, spawnWorker, stopWorker, workspace } from './harness.js';

it('one worker through a long run: heap after warm-up stays flat, throughput stays steady', async () => {
  named('soak');
  const jobs = pick(10_000, 100_000);
  const { queueUrl, dlqUrl } = await freshPair('soak', 30);
  const ws = workspace('soak');
  const all = Array.from({ length: jobs }, (_, i) => ({ id: `soak-${ws.lockPrefix.slice(12, 20)}-${i}`, ms: 0 }));
  await send(queueUrl, all);
  const every = jobs / 20;
  const worker = spawnWorker(
    {
      QUEUE_URL: queueUrl,
      EFFECTS_LOG: ws.effects,
      LOCK_PREFIX: ws.lockPrefix,
      CONCURRENCY: '20',
      VISIBILITY: '30',
      REPORT_HEAP: '1',
      REPORT_EVERY: String(every),
    },
    ['--expose-gc'],
  );
  const samples: { processed: number; heapUsed: number; at: number }[] = [];
  worker.child.on(
    'message',
    (m: { type?: string; processed: number; heapUsed: number; at: number }) => m.type === 'heap' && samples.push(m),
  );
  await worker.ready;
  const done = await settled(queueUrl, dlqUrl, new Set(all.map((j) => j.id)), ws.effects, pick(300_000, 1_800_000));
  await stopWorker(worker);
  // Warm-up is the first quarter; compare the heap there with the end, and the pace of each fifth.
  const warm = samples[Math.floor(samples.length / 4)]!;
  const last = samples[samples.length - 1]!;
  const rate = (a: (typeof samples)[number], b: (typeof samples)[number]) => ((b.processed - a.processed) / (b.at - a.at)) * 1000;
  const fifths = [1, 2, 3, 4].map((k) =>
    rate(samples[Math.floor(((k - 1) * samples.length) / 5)]!, samples[Math.floor((k * samples.length) / 5) - 1]!),
  );
  const report = await account(new Set(all.map((j) => j.id)), ws.effects, dlqUrl, {
    heapAfterWarmupMB: +(warm.heapUsed / 2 ** 20).toFixed(1),
    heapAtEndMB: +(last.heapUsed / 2 ** 20).toFixed(1),
    jobsPerSecondByFifth: fifths.map((f) => f.toFixed(0)).join(' / '),
  });
  expect(done).toBe(true);
  expect(report.lost).toBe(0);
  expect(samples.length).toBeGreaterThanOrEqual(10);
  // Flat: no more than a fifth (plus 4 MB of GC slack) above the warmed-up heap.
  expect(last.heapUsed).toBeLessThan(warm.heapUsed * 1.2 + 4 * 2 ** 20);
  // Steady: no fifth of the run is slower than a third of the fastest (catches pile-ups, not noise).
  expect(Math.min(...fifths)).toBeGreaterThan(Math.max(...fifths) / 3);
}, 2_400_000);
