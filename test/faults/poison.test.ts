import { request } from 'node:http';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { expect, it } from 'vitest';
import {
  ELASTICMQ,
  account,
  depth,
  drainBodies,
  freshPair,
  named,
  send,
  settled,
  spawnWorker,
  sqs,
  stopWorker,
  workspace,
} from './harness.js';

/** Post raw bytes as an SQS SendMessage, bypassing the SDK (which cannot send invalid UTF-8). */
function sendRawBytes(queueUrl: string, body: Buffer): Promise<number> {
  const payload = Buffer.concat([Buffer.from(`{"QueueUrl":${JSON.stringify(queueUrl)},"MessageBody":"`), body, Buffer.from('"}')]);
  const url = new URL(ELASTICMQ);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method: 'POST',
        path: '/',
        headers: {
          'content-type': 'application/x-amz-json-1.0',
          'x-amz-target': 'AmazonSQS.SendMessage',
          'content-length': payload.length,
        },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

it('each kind of poison ends in the DLQ with its reason while healthy jobs keep flowing', async () => {
  named('poison');
  const { queueUrl, dlqUrl } = await freshPair('poison', 5);
  const ws = workspace('poison');
  let deep = '{"ms":0,"note":"x"}';
  for (let i = 0; i < 5_000; i++) deep = `{"a":${deep}}`;
  const corpus: [string, string][] = [
    ['{"v":1,"id":"p-json","job":"work","args":{"ms":0}', 'invalid-json'],
    ['{"v":2,"id":"p-version","job":"work","args":{"ms":0}}', 'unsupported-version'],
    ['{"v":1,"id":"p-unknown","job":"require(\'child_process\')","args":{}}', 'unknown-job'],
    ['{"v":1,"id":"p-args","job":"work","args":{"ms":"soon"}}', 'invalid-args'],
    [`{"v":1,"id":"p-oversized","job":"work","args":{"ms":0,"note":"${'x'.repeat(200_000)}"}}`, 'invalid-args'],
    [`{"v":1,"id":"p-deep","job":"work","args":${deep}}`, 'invalid-args'],
    ['[]', 'not-an-envelope'],
  ];
  for (const [body] of corpus) await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));
  // Invalid UTF-8: whatever the server makes of it, it must not crash a worker.
  const rawStatus = await sendRawBytes(queueUrl, Buffer.from([0xff, 0xfe, 0x7b, 0xc3, 0x28]));
  const rawAccepted = rawStatus === 200;
  const healthy = Array.from({ length: 300 }, (_, i) => ({ id: `ok-${ws.lockPrefix.slice(15, 23)}-${i}`, ms: 5 }));
  await send(queueUrl, healthy);
  const worker = spawnWorker({
    QUEUE_URL: queueUrl,
    EFFECTS_LOG: ws.effects,
    LOCK_PREFIX: ws.lockPrefix,
    CONCURRENCY: '10',
    VISIBILITY: '5',
  });
  await worker.ready;
  const poisonCount = corpus.length + (rawAccepted ? 1 : 0);
  const until = Date.now() + 120_000;
  while (Date.now() < until && (await depth(dlqUrl)).visible < poisonCount) await new Promise((r) => setTimeout(r, 300));
  const done = await settled(queueUrl, dlqUrl, new Set(healthy.map((j) => j.id)), ws.effects, 120_000);
  const code = await stopWorker(worker);
  const dead = await drainBodies(dlqUrl);
  const reasons = Object.fromEntries(dead.map((m) => [m.body.slice(0, 60), m.attributes['sqsjobs-dlq-reason']]));
  for (const [body, reason] of corpus) expect(reasons[body.slice(0, 60)], body.slice(0, 60)).toBe(reason);
  if (rawAccepted) expect(dead.some((m) => m.attributes['sqsjobs-dlq-reason'] === 'invalid-json')).toBe(true);
  expect(code).toBe(0);
  expect(done).toBe(true);
  // the DLQ was drained above: account() counts the healthy ones
  const report = await account(new Set(healthy.map((j) => j.id)), ws.effects, dlqUrl, {
    poison: poisonCount,
    invalidUtf8: rawAccepted ? 'stored by the server, dead-lettered' : `refused by the server (HTTP ${rawStatus})`,
  });
  expect(report.completed).toBe(300);
  expect(report.completedTwice).toBe(0);
}, 300_000);
