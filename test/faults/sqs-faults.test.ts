import { expect, it } from 'vitest';
import { SqsProxy } from '../../bench/lib/sqs-proxy.js';
import { ELASTICMQ, account, freshPair, named, pick, send, settled, spawnWorker, stopWorker, workspace } from './harness.js';

it('connection resets, 500/503s and latency spikes longer than the heartbeat: workers survive, nothing is lost', async () => {
  named('sqs-faults');
  const jobs = pick(400, 4_000);
  const { queueUrl, dlqUrl } = await freshPair('sqsfault', 4, 20);
  const ws = workspace('sqsfault');
  // Mostly short jobs; every twentieth runs 6 s and needs heartbeats through the faults.
  const all = Array.from({ length: jobs }, (_, i) => ({
    id: `sf-${ws.lockPrefix.slice(15, 23)}-${i}`,
    ms: i % 20 === 0 ? 6_000 : 50 + ((i * 37) % 400),
  }));
  await send(queueUrl, all);
  const proxy = await SqsProxy.start(ELASTICMQ, 42);
  proxy.setPlan({ resetRate: 0.02, errorRate: 0.05, latencyRate: 0.03, latencyMs: 2_500 });
  const env = {
    QUEUE_URL: queueUrl.replace(ELASTICMQ, proxy.url),
    ENDPOINT: proxy.url,
    EFFECTS_LOG: ws.effects,
    LOCK_PREFIX: ws.lockPrefix,
    CONCURRENCY: '10',
    VISIBILITY: '4',
    HEARTBEAT_MS: '2000',
  };
  const workers = [1, 2].map(() => spawnWorker(env));
  await Promise.all(workers.map((w) => w.ready));
  const exitedEarly: (number | null)[] = [];
  for (const w of workers) void w.exited.then((code) => exitedEarly.push(code));

  const done = await settled(queueUrl, dlqUrl, new Set(all.map((j) => j.id)), ws.effects, pick(240_000, 900_000));
  const crashed = exitedEarly.length;
  proxy.setPlan({});
  const codes = await Promise.all(workers.map((w) => stopWorker(w)));
  const report = await account(new Set(all.map((j) => j.id)), ws.effects, dlqUrl, {
    ...proxy.injected,
    calls: proxy.total(),
    workersCrashed: crashed,
  });
  await proxy.close();
  expect(proxy.injected.resets + proxy.injected.errors + proxy.injected.delays).toBeGreaterThan(0);
  expect(crashed).toBe(0);
  expect(codes).toEqual([0, 0]);
  expect(done).toBe(true);
  expect(report.lost).toBe(0);
}, 1_200_000);
