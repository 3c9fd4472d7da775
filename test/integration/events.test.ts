import { randomUUID } from 'node:crypto';
import { PublishCommand } from '@aws-sdk/client-sns';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SqsQueueAdmin } from '../../src/adapters/sqs-admin.js';
import { SqsQueuePort } from '../../src/adapters/sqs-queue.js';
import { createSnsClient, SnsTopics } from '../../src/adapters/sns-topics.js';
import { defineEvent } from '../../src/core/event.js';
import { UnrecoverableError, ValidationError } from '../../src/core/errors.js';
import { defineJob, type JobContext } from '../../src/core/job.js';
import { listDeadLetters } from '../../src/ops/dlq-scan.js';
import { provisionEvents } from '../../src/ops/events.js';
import { replayDeadLetters } from '../../src/ops/replay.js';
import { provisionQueues } from '../../src/ops/queues.js';
import { createPublisher } from '../../src/producer/create-publisher.js';
import { createProducer } from '../../src/producer/producer.js';
import { LOCAL_ENDPOINT, LOCAL_ENV, eventually, queueCounts, sleep, sqsClient } from '../helpers/stack.js';
import { recordEvents, useWorkers } from '../helpers/worker.js';

// Events on real SNS → real SQS (LocalStack or moto): publish once, every subscriber runs once on its own queue.
const sqs = sqsClient();
const sns = createSnsClient({ endpoint: LOCAL_ENDPOINT, region: 'us-east-1' }, {}, {});
const admin = new SqsQueueAdmin(sqs);
const topics = new SnsTopics(sns);
afterAll(() => {
  sqs.destroy();
  sns.destroy();
});
const start = useWorkers();

function orderEvent() {
  const tag = randomUUID().slice(0, 8);
  const placed = defineEvent({ name: `order.placed-${tag}`, payload: z.object({ orderId: z.string(), total: z.number().nonnegative() }) });
  return { tag, placed };
}

describe('events (SNS → SQS)', () => {
  it('runs each subscriber once per event, on its own queue; a filter policy keeps one from what it did not ask for; a repeated publish runs nobody twice', async () => {
    const { tag, placed } = orderEvent();
    const ran: { job: string; orderId: string; jobId: string; event: JobContext['event'] }[] = [];
    const record = (job: string) => (p: { orderId: string }, ctx: JobContext) => {
      ran.push({ job, orderId: p.orderId, jobId: ctx.jobId, event: ctx.event });
    };
    const reserve = defineJob({ name: `reserve-stock-${tag}`, on: placed, handle: record('reserve') });
    const confirm = defineJob({ name: `send-confirmation-${tag}`, on: [placed, { region: ['eu'] }], handle: record('confirm') });
    const made = await provisionEvents(admin, topics, [reserve, confirm], { visibilityTimeout: 10 });
    expect(made.subscribers.map((s) => s.job)).toEqual([reserve.name, confirm.name]);
    expect(made.changes).toContainEqual({ topic: placed.topic, change: 'created' });
    // Run again: nothing to do.
    expect((await provisionEvents(admin, topics, [reserve, confirm], { visibilityTimeout: 10 })).changes).toEqual([]);

    // One worker on both queues: each message runs the job whose queue it is.
    const worker = start({ queues: made.subscribers.map((s) => s.queueUrl), jobs: [reserve, confirm] });
    const events = recordEvents(worker);
    await worker.start();
    const producer = createProducer({ queueUrl: made.subscribers[0]!.queueUrl }, LOCAL_ENV);
    const eu = await producer.publish(placed, { orderId: 'o-1', total: 30 }, { id: `e1-${tag}`, attributes: { region: 'eu' } });
    await producer.publish(placed, { orderId: 'o-2', total: 12 }, { id: `e2-${tag}`, attributes: { region: 'us' } });
    await producer.publish(placed, { orderId: 'o-1', total: 30 }, { id: `e1-${tag}`, attributes: { region: 'eu' } }); // again
    expect(eu.eventId).toBe(`e1-${tag}`);
    await eventually(() => ran.length >= 3, 'three runs');
    await sleep(2_000); // the repeated publish's copies arrive, and are not run
    for (const s of made.subscribers) await eventually(async () => (await queueCounts(sqs, s.queueUrl)).visible === 0, 'queues empty');
    producer.close();
    expect(ran.map((r) => `${r.job}:${r.orderId}`).sort()).toEqual(['confirm:o-1', 'reserve:o-1', 'reserve:o-2']);
    expect(ran.find((r) => r.job === 'confirm')).toMatchObject({
      jobId: `e1-${tag}.${confirm.name}`,
      event: { name: placed.name, id: `e1-${tag}` },
    });
    expect(events.count('job:duplicate')).toBe(2); // the repeated publish, to both subscribers
    expect(events.count('job:dead-lettered')).toBe(0);
  });

  it('publishMany from a publisher without a queue: 25 events in batches, each subscriber runs each once, again with the same ids runs none', async () => {
    const { tag, placed } = orderEvent();
    const ran = { a: [] as string[], b: [] as string[] };
    const a = defineJob({ name: `ledger-${tag}`, on: placed, handle: (p) => void ran.a.push(p.orderId) });
    const b = defineJob({ name: `search-index-${tag}`, on: placed, handle: (p) => void ran.b.push(p.orderId) });
    const made = await provisionEvents(admin, topics, [a, b], { visibilityTimeout: 10 });
    const worker = start({ queues: made.subscribers.map((s) => s.queueUrl), jobs: [a, b] });
    const events = recordEvents(worker);
    await worker.start();
    // No queue URL, no account: the topic is found by its name.
    const publisher = createPublisher({}, LOCAL_ENV);
    const ids = Array.from({ length: 25 }, (_, i) => `pm-${tag}-${i}`);
    const payloads = ids.map((_, i) => ({ orderId: `o-${i}`, total: i }));
    await expect(publisher.publishMany(placed, [...payloads, { orderId: 'x', total: -1 }])).rejects.toMatchObject({
      code: 'ARGS_INVALID',
      message: expect.stringContaining('payloads[25].total'),
    });
    const out = await publisher.publishMany(placed, payloads, { ids });
    expect(out.map((r) => r.eventId)).toEqual(ids);
    await eventually(() => ran.a.length === 25 && ran.b.length === 25, 'every event run by both subscribers');
    await publisher.publishMany(placed, payloads, { ids }); // again: duplicates, run by no one
    await eventually(() => events.count('job:duplicate') === 50, 'the repeats seen as duplicates');
    publisher.close();
    expect(new Set(ran.a).size).toBe(25);
    expect([...ran.b].sort()).toEqual([...ran.a].sort());
  });

  it('a FIFO event: each subscriber gets every group in publish order on its FIFO queue; a repeated id is dropped before any queue', async () => {
    const tag = randomUUID().slice(0, 8);
    const moved = defineEvent({ name: `stock.moved-${tag}`, fifo: true, payload: z.object({ sku: z.string(), seq: z.number().int() }) });
    expect(moved.topic).toBe(`stock-moved-${tag}.fifo`);
    const seen = { ledger: [] as string[], audit: [] as string[] };
    const ledger = defineJob({ name: `ledger-${tag}`, on: moved, handle: (p) => void seen.ledger.push(`${p.sku}:${p.seq}`) });
    const audit = defineJob({ name: `audit-${tag}`, on: moved, handle: (p) => void seen.audit.push(`${p.sku}:${p.seq}`) });
    const made = await provisionEvents(admin, topics, [ledger, audit], { visibilityTimeout: 10 });
    expect(made.subscribers.map((s) => s.queueUrl.split('/').at(-1))).toEqual([`ledger-${tag}.fifo`, `audit-${tag}.fifo`]);
    expect((await provisionEvents(admin, topics, [ledger, audit], { visibilityTimeout: 10 })).changes).toEqual([]);
    const publisher = createPublisher({}, LOCAL_ENV);
    await expect(publisher.publish(moved, { sku: 'a', seq: 0 })).rejects.toThrow(/options\.groupId: is required/);
    // Two groups (one per sku), published in order, half one at a time and half in a batch.
    for (let seq = 0; seq < 5; seq++) {
      await publisher.publish(moved, { sku: 'a', seq }, { id: `a-${seq}-${tag}`, groupId: 'a' });
    }
    await publisher.publishMany(
      moved,
      [0, 1, 2, 3, 4].map((seq) => ({ sku: 'b', seq })),
      { ids: [0, 1, 2, 3, 4].map((seq) => `b-${seq}-${tag}`), groupId: 'b' },
    );
    await publisher.publish(moved, { sku: 'a', seq: 0 }, { id: `a-0-${tag}`, groupId: 'a' }); // a repeat
    publisher.close();
    const worker = start({ queues: made.subscribers.map((s) => s.queueUrl), jobs: [ledger, audit] });
    const events = recordEvents(worker);
    await worker.start();
    await eventually(() => seen.ledger.length === 10 && seen.audit.length === 10, 'every event by both subscribers');
    await sleep(1_500); // a repeat would have arrived by now
    const group = (list: string[], sku: string) => list.filter((x) => x.startsWith(`${sku}:`));
    for (const list of [seen.ledger, seen.audit]) {
      expect(list).toHaveLength(10);
      expect(group(list, 'a')).toEqual(['a:0', 'a:1', 'a:2', 'a:3', 'a:4']);
      expect(group(list, 'b')).toEqual(['b:0', 'b:1', 'b:2', 'b:3', 'b:4']);
    }
    expect(events.count('job:duplicate')).toBe(0); // the repeat was dropped by deduplication (SNS's, or the FIFO queue's): it never ran
  });

  it('a subscriber run that fails for good is in its DLQ under the job’s name and id; `--job` finds it, a replay runs it once more', async () => {
    const { tag, placed } = orderEvent();
    let fail = true;
    const ran: string[] = [];
    const refund = defineJob({
      name: `refund.check-${tag}`,
      on: placed,
      handle: (p, ctx) => {
        ran.push(ctx.jobId);
        if (fail) throw new UnrecoverableError(`order ${p.orderId} not found yet`);
      },
    });
    const [sub] = (await provisionEvents(admin, topics, [refund], { visibilityTimeout: 10 })).subscribers;
    const worker = start({ queues: [sub!.queueUrl], jobs: [refund] });
    await worker.start();
    const publisher = createPublisher({}, LOCAL_ENV);
    await publisher.publish(placed, { orderId: 'o-9', total: 9 }, { id: `ev9-${tag}` });
    publisher.close();
    const jobId = `ev9-${tag}.${refund.name}`;
    const port = new SqsQueuePort(sqs);
    const found = await eventually(async () => {
      const letters = await listDeadLetters(port, sub!.dlqUrl, 10, { job: refund.name });
      return letters.length === 1 ? letters : undefined;
    }, 'the failed run in the DLQ, found by its job');
    expect(found[0]).toMatchObject({ jobName: refund.name, jobId, event: placed.name, reason: 'unrecoverable' });
    fail = false;
    const replayed = await replayDeadLetters(port, { dlqUrl: sub!.dlqUrl, sourceQueueUrl: undefined, filter: { job: refund.name } });
    expect(replayed.moved).toBe(1);
    await eventually(() => ran.length === 2, 'the replayed run');
    expect(ran).toEqual([jobId, jobId]);
  });

  it('a subscriber whose workers are stopped delays no one: the others drain, and it catches up when resumed, nothing lost', async () => {
    const { tag, placed } = orderEvent();
    const done = { fast: new Set<string>(), slow: new Set<string>() };
    const fast = defineJob({ name: `fast-${tag}`, on: placed, handle: (p) => void done.fast.add(p.orderId) });
    const slow = defineJob({ name: `slow-${tag}`, on: placed, handle: (p) => void done.slow.add(p.orderId) });
    const made = await provisionEvents(admin, topics, [fast, slow], { visibilityTimeout: 10 });
    const [fastQueue, slowQueue] = made.subscribers.map((s) => s.queueUrl);
    const fastWorker = start({ queues: [fastQueue!], jobs: [fast] });
    await fastWorker.start();
    const producer = createProducer({ queueUrl: fastQueue! }, LOCAL_ENV);
    const n = 20;
    for (let i = 0; i < n; i++) await producer.publish(placed, { orderId: `o-${i}`, total: i }, { id: `ev-${tag}-${i}` });
    producer.close();
    await eventually(() => done.fast.size === n, 'the running subscriber to take every event');
    expect(done.slow.size).toBe(0);
    await sleep(3_000); // the stopped subscriber's queue holds them meanwhile
    expect((await queueCounts(sqs, slowQueue!)).visible).toBe(n);
    const slowWorker = start({ queues: [slowQueue!], jobs: [slow] });
    await slowWorker.start();
    await eventually(() => done.slow.size === n, 'the resumed subscriber to catch up');
    expect([...done.slow].sort()).toEqual([...done.fast].sort());
  });

  it('reads wrapped SNS notifications from its topics only: another topic’s, and a broken one, go to the DLQ with the reason', async () => {
    const { tag, placed } = orderEvent();
    const seen: string[] = [];
    const audit = defineJob({ name: `audit-${tag}`, on: placed, handle: (p) => void seen.push(p.orderId) });
    // A subscription someone else made: no raw delivery, so SNS wraps each message.
    const pair = await provisionQueues(admin, { name: `audit-${tag}`, visibilityTimeout: 10, maxReceiveCount: 2 });
    const { topicArn } = await topics.createTopic(placed.topic);
    await topics.subscribeQueue(topicArn, pair.queueArn, { rawMessageDelivery: false, filterPolicy: undefined });
    const worker = start({ queues: [pair.queueUrl], jobs: [audit] });
    const events = recordEvents(worker);
    await worker.start();
    const producer = createProducer({ queueUrl: pair.queueUrl }, LOCAL_ENV);
    await producer.publish(placed, { orderId: 'w-1', total: 1 });
    producer.close();
    const stranger = JSON.stringify({
      Type: 'Notification',
      TopicArn: `${topicArn}-other`,
      MessageId: 'x',
      Message: '{"v":1,"event":"x","args":{}}',
    });
    const broken = JSON.stringify({ Type: 'Notification', TopicArn: topicArn, MessageId: 'y', Message: 'not json' });
    for (const body of [stranger, broken]) await sqs.send(new SendMessageCommand({ QueueUrl: pair.queueUrl, MessageBody: body }));
    await eventually(() => seen.length === 1 && events.count('job:dead-lettered') === 2, 'one run, two dead letters');
    expect(seen).toEqual(['w-1']);
    const dead = await listDeadLetters(new SqsQueuePort(sqs), pair.dlqUrl);
    expect(dead.map((d) => d.reason).sort()).toEqual(['invalid-json', 'unknown-topic']);
  });

  it('runs an event published by hand, as another language would (the documented wire format, no sqs-jobs on the sending side)', async () => {
    const { tag, placed } = orderEvent();
    const got: { orderId: string; event: JobContext['event'] }[] = [];
    const job = defineJob({ name: `ship-${tag}`, on: placed, handle: (p, ctx) => void got.push({ orderId: p.orderId, event: ctx.event }) });
    const made = await provisionEvents(admin, topics, [job]);
    const worker = start({ queues: [made.subscribers[0]!.queueUrl], jobs: [job] });
    await worker.start();
    await sns.send(
      new PublishCommand({
        TopicArn: made.subscribers[0]!.topicArn,
        Message: JSON.stringify({ v: 1, id: `order-${tag}`, event: placed.name, args: { orderId: 'o-42', total: 3 } }),
        MessageAttributes: { 'sqsjobs-event': { DataType: 'String', StringValue: placed.name } },
      }),
    );
    await eventually(() => got.length === 1, 'the job to run');
    expect(got[0]).toEqual({ orderId: 'o-42', event: { name: placed.name, id: `order-${tag}` } });
  });

  it('refuses an invalid or oversized payload at publish, naming the field, and sends nothing', async () => {
    const { tag, placed } = orderEvent();
    const job = defineJob({ name: `bill-${tag}`, on: placed, handle: () => {} });
    const made = await provisionEvents(admin, topics, [job]);
    const queueUrl = made.subscribers[0]!.queueUrl;
    const producer = createProducer({ queueUrl, maxMessageBytes: 1_024 }, LOCAL_ENV);
    const invalid = producer.publish(placed, { orderId: 'o', total: -1 });
    await expect(invalid).rejects.toBeInstanceOf(ValidationError);
    await expect(invalid).rejects.toThrow(/payload\.total/);
    await expect(producer.publish(placed, { orderId: 'x'.repeat(2_000), total: 1 })).rejects.toThrow(/over the limit of 1024 bytes/);
    await expect(producer.publish(placed, { orderId: 'o', total: 1 }, { attributes: { 'sqsjobs-x': 'y' } })).rejects.toThrow(
      /options\.attributes/,
    );
    producer.close();
    await sleep(500);
    expect(await queueCounts(sqs, queueUrl)).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
  });
});
