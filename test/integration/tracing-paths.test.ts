import { randomUUID } from 'node:crypto';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDynamoClient } from '../../src/adapters/aws-clients.js';
import { createJobTable } from '../../src/adapters/dynamodb-store.js';
import { SqsQueueAdmin } from '../../src/adapters/sqs-admin.js';
import { SqsQueuePort } from '../../src/adapters/sqs-queue.js';
import { createSnsClient, SnsTopics } from '../../src/adapters/sns-topics.js';
import { defineEvent } from '../../src/core/event.js';
import { provisionEvents } from '../../src/ops/events.js';
import { createPublisher } from '../../src/producer/create-publisher.js';
import { defineBatchJob } from '../../src/core/batch-job.js';
import { RetryLaterError, UnrecoverableError } from '../../src/core/errors.js';
import { defineJob } from '../../src/core/job.js';
import { fanOutResultSchema } from '../../src/fan-out/completion.js';
import { replayDeadLetters } from '../../src/ops/replay.js';
import { createProducer } from '../../src/producer/producer.js';
import { useOtel } from '../helpers/otel.js';
import { LOCAL_DYNAMODB, LOCAL_ENDPOINT, LOCAL_ENV, LOCAL_STACK, eventually, freshQueues, sqsClient } from '../helpers/stack.js';
import { recordEvents, useWorkers } from '../helpers/worker.js';

/*
 * Issue 23's paths, with the real OpenTelemetry SDK on the local servers: every way a job is sent
 * again keeps it in the trace it was sent in (the envelope's context, or X-Ray's header), a batch
 * handler's span links to each item's sender, a fan-out's children and completion stay in the
 * parent's trace, and a message that ends without running says why in its trace.
 */

const otel = useOtel();
const { tracer } = otel;
const sqs = sqsClient();
const dynamo = createDynamoClient({ endpoint: LOCAL_DYNAMODB, region: 'us-east-1' }, {}, {});
const store = { table: `trace-${randomUUID().slice(0, 8)}`, endpoint: LOCAL_DYNAMODB };
beforeAll(() => createJobTable(dynamo, store.table));
afterAll(() => {
  sqs.destroy();
  dynamo.destroy();
});
const start = useWorkers();

const XRAY_TRACE = '5759e988bd862e3fe1be46a994272793';
const XRAY_PARENT = '53995c3f42cd8ad8';
const xrayHeader = `Root=1-${XRAY_TRACE.slice(0, 8)}-${XRAY_TRACE.slice(8)};Parent=${XRAY_PARENT};Sampled=1`;

/** Send a job's envelope with no trace field, only X-Ray's AWSTraceHeader (as a producer in another language with X-Ray would). */
async function sendXrayOnly(queueUrl: string, job: string, args: object): Promise<string> {
  const id = `xray-${randomUUID().slice(0, 8)}`;
  await sqs.send(
    new SendMessageCommand({
      QueueUrl: queueUrl,
      MessageBody: JSON.stringify({ v: 1, id, job, args }),
      MessageSystemAttributes: { AWSTraceHeader: { DataType: 'String', StringValue: xrayHeader } },
    }),
  );
  return id;
}

/** Every process span of `jobId`: each a child of its send span, in the send span's trace. Answers them by attempt. */
function runsUnderSend(jobId: string): ReadableSpan[] {
  const [send] = otel.ofJob('send ', jobId);
  expect(send, `the send span of ${jobId}`).toBeDefined();
  const runs = otel.ofJob('process ', jobId);
  expect(runs.length, `the runs of ${jobId}`).toBeGreaterThan(0);
  for (const run of runs) {
    expect(run.spanContext().traceId).toBe(send!.spanContext().traceId);
    expect(run.parentSpanContext?.spanId).toBe(send!.spanContext().spanId);
  }
  return runs.sort((a, b) => Number(a.attributes['sqs_jobs.attempt']) - Number(b.attributes['sqs_jobs.attempt']));
}

/** Every process span of `jobId` runs in the X-Ray trace it came with. */
function runsUnderXray(jobId: string): ReadableSpan[] {
  const runs = otel.ofJob('process ', jobId);
  expect(runs.length, `the runs of ${jobId}`).toBeGreaterThan(0);
  for (const run of runs) {
    expect(run.spanContext().traceId).toBe(XRAY_TRACE);
    expect(run.parentSpanContext?.spanId).toBe(XRAY_PARENT);
  }
  return runs;
}

describe('a job sent again stays in its trace', () => {
  const failsOnce = defineJob({
    name: 'trace-again',
    args: z.object({ n: z.number() }),
    handle: (_a, ctx) => {
      if (ctx.attempt === 1) throw new RetryLaterError(0, 'not yet');
    },
  });

  it('re-sent on its last receive (its envelope trace, or only an X-Ray header)', async () => {
    // maxReceiveCount 1: a retry the handler asks for cannot be a visibility change (SQS would
    // dead-letter the message on its next receive), so the message is re-sent.
    const { queueUrl } = await freshQueues(sqs, 'trace-resend', { maxReceiveCount: 1 });
    const producer = createProducer({ queueUrl, jobs: [failsOnce] }, LOCAL_ENV);
    const { jobId } = await tracer.startActiveSpan('request', async (span) => {
      const sent = await producer.enqueue(failsOnce, { n: 1 });
      span.end();
      return sent;
    });
    producer.close();
    const xrayId = await sendXrayOnly(queueUrl, 'trace-again', { n: 2 });
    const worker = start({ queues: [queueUrl], jobs: [failsOnce] });
    const events = recordEvents(worker);
    await worker.start();
    await eventually(() => events.count('job:succeeded') === 2, 'both jobs to succeed on their second attempt', 20_000);
    expect(
      events
        .of('job:resent')
        .map((e) => e.jobId)
        .sort(),
    ).toEqual([jobId, xrayId].sort());
    expect(runsUnderSend(jobId).map((s) => s.attributes['sqs_jobs.attempt'])).toEqual([1, 2]);
    if (LOCAL_STACK === 'moto') {
      // The re-send goes in a SendMessageBatch call, whose MessageSystemAttributes moto 5.2 drops (LocalStack and SQS keep them).
      const [first] = otel.ofJob('process ', xrayId).filter((r) => r.attributes['sqs_jobs.attempt'] === 1);
      expect(first!.spanContext().traceId).toBe(XRAY_TRACE);
    } else expect(runsUnderXray(xrayId)).toHaveLength(2);
  });

  it('replayed from the DLQ (its envelope trace, or only an X-Ray header)', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'trace-replay', { maxReceiveCount: 3 });
    let broken = true;
    const job = defineJob({
      name: 'trace-replayed',
      args: z.object({}),
      handle: () => {
        if (broken) throw new UnrecoverableError('a bug, fixed before the replay');
      },
    });
    const producer = createProducer({ queueUrl, jobs: [job] }, LOCAL_ENV);
    const { jobId } = await tracer.startActiveSpan('request', async (span) => {
      const sent = await producer.enqueue(job, {});
      span.end();
      return sent;
    });
    producer.close();
    const xrayId = await sendXrayOnly(queueUrl, 'trace-replayed', {});
    const worker = start({ queues: [queueUrl], jobs: [job] });
    const events = recordEvents(worker);
    await worker.start();
    await eventually(() => events.count('job:dead-lettered') === 2, 'both jobs dead-lettered', 20_000);
    broken = false;
    expect((await replayDeadLetters(new SqsQueuePort(sqs), { dlqUrl, sourceQueueUrl: queueUrl })).moved).toBe(2);
    await eventually(() => events.count('job:succeeded') === 2, 'both replayed jobs to run', 20_000);
    const [dead, replayed] = runsUnderSend(jobId);
    expect(dead!.events.map((e) => e.name)).toContain('sqs_jobs.dead_letter');
    expect(replayed!.status.code).toBe(0);
    if (LOCAL_STACK === 'moto') {
      // The replay sends with SendMessageBatch, whose MessageSystemAttributes moto 5.2 drops (LocalStack and SQS keep them).
      const [deadXray] = otel.ofJob('process ', xrayId).filter((r) => r.events.some((e) => e.name === 'sqs_jobs.dead_letter'));
      expect(deadXray!.spanContext().traceId).toBe(XRAY_TRACE);
    } else expect(runsUnderXray(xrayId)).toHaveLength(2);
  });

  it('deferred at its tenant cap, or sent to the spillover queue', async () => {
    const { queueUrl, spilloverQueueUrl } = await freshQueues(sqs, 'trace-defer', { spillover: true });
    const job = defineJob({
      name: 'trace-render',
      args: z.object({ n: z.number() }),
      handle: async (_a, ctx) => {
        await new Promise((r) => setTimeout(r, ctx.tenant === 'acme' ? 300 : 30));
      },
    });
    // acme's jobs come faster than one at a time can run them, globex's keep the queue moving: acme's past the room are re-sent.
    const spillover = { queueUrl: spilloverQueueUrl!, ratePerSecond: 0.001, burst: 8 };
    const producer = createProducer({ queueUrl, jobs: [job], spillover, lockKeyPrefix: `trace-spill-${randomUUID()}:` }, LOCAL_ENV);
    const jobIds = await tracer.startActiveSpan('import', async (span) => {
      const ids: string[] = [];
      for (let n = 0; n < 16; n++) {
        ids.push((await producer.enqueue(job, { n }, { tenant: 'acme' })).jobId);
        ids.push((await producer.enqueue(job, { n }, { tenant: 'globex' })).jobId);
      }
      span.end();
      return ids;
    });
    producer.close();
    const worker = start({
      queues: [queueUrl, spilloverQueueUrl!],
      jobs: [job],
      concurrency: 2,
      prefetch: 1,
      tenantCaps: { acme: 1 },
      capDelaySeconds: 5,
    });
    const events = recordEvents(worker);
    await worker.start();
    await eventually(() => events.count('job:succeeded') === jobIds.length, 'every job to run', 90_000);
    const spilled = jobIds.filter((id) => otel.ofJob('send ', id)[0]?.attributes['aws.sqs.queue.url'] === spilloverQueueUrl);
    expect(spilled.length).toBeGreaterThan(0);
    const deferred = [...new Set(events.of('job:deferred').map((e) => e.jobId))];
    expect(deferred.length).toBeGreaterThan(0);
    for (const id of jobIds) expect(runsUnderSend(id)).toHaveLength(1);
  });
});

describe('events', () => {
  it('a publish is a send span on the topic, and every subscriber runs under it; publishMany is one span for all', async () => {
    const sns = createSnsClient({ endpoint: LOCAL_ENDPOINT, region: 'us-east-1' }, {}, {});
    const tag = randomUUID().slice(0, 8);
    const placed = defineEvent({ name: `trace.placed-${tag}`, payload: z.object({ orderId: z.string() }) });
    const reserve = defineJob({ name: `trace-reserve-${tag}`, on: placed, handle: () => {} });
    const confirm = defineJob({ name: `trace-confirm-${tag}`, on: placed, handle: () => {} });
    const made = await provisionEvents(new SqsQueueAdmin(sqs), new SnsTopics(sns), [reserve, confirm], { visibilityTimeout: 10 });
    const worker = start({ queues: made.subscribers.map((s) => s.queueUrl), jobs: [reserve, confirm] });
    const events = recordEvents(worker);
    await worker.start();
    const publisher = createPublisher({ endpoint: LOCAL_ENDPOINT, region: 'us-east-1' }, LOCAL_ENV);
    const one = await tracer.startActiveSpan('POST /orders', async (span) => {
      const r = await publisher.publish(placed, { orderId: 'o-1' }, { tenant: 'acme' });
      span.end();
      return r;
    });
    await publisher.publishMany(placed, [{ orderId: 'o-2' }, { orderId: 'o-3' }]);
    publisher.close();
    sns.destroy();
    await eventually(() => events.count('job:succeeded') === 6, 'each subscriber to run each event', 30_000);
    const sends = otel.spans().filter((s) => s.name === `send ${placed.topic}`);
    expect(sends).toHaveLength(2);
    const single = sends.find((s) => s.attributes['messaging.batch.message_count'] === undefined);
    const many = sends.find((s) => s.attributes['messaging.batch.message_count'] !== undefined);
    expect(single!.attributes).toMatchObject({
      'messaging.system.name': 'aws.sns',
      'messaging.destination.name': placed.topic,
      'sqs_jobs.event.name': placed.name,
      'sqs_jobs.event.id': one.eventId,
      'messaging.message.id': one.messageId,
      'sqs_jobs.tenant': 'acme',
    });
    expect(single!.attributes['aws.sns.topic.arn']).toMatch(/^arn:aws:sns:/);
    expect(many!.attributes['messaging.batch.message_count']).toBe(2);
    const runs = [reserve, confirm].flatMap((job) => otel.named(`process ${job.name}`));
    expect(runs).toHaveLength(6);
    const underSingle = runs.filter((r) => r.parentSpanContext?.spanId === single!.spanContext().spanId);
    expect(underSingle.map((r) => r.attributes['sqs_jobs.job.id']).sort()).toEqual(
      [`${one.eventId}.${confirm.name}`, `${one.eventId}.${reserve.name}`].sort(),
    );
    expect(runs.filter((r) => r.parentSpanContext?.spanId === many!.spanContext().spanId)).toHaveLength(4);
  });
});

describe('batches, fan-outs, and messages that do not run', () => {
  it("a batch handler's span links to each item's sender, with the item's ids; an item that fails alone is an event", async () => {
    const { queueUrl } = await freshQueues(sqs, 'trace-batch');
    const active: (string | undefined)[] = [];
    const job = defineBatchJob({
      name: 'trace-index',
      args: z.object({ n: z.number() }),
      maxSize: 3,
      minSize: 3,
      maxWaitMs: 10_000,
      handle: (items) => {
        active.push(otel.tracer.startSpan('inside').spanContext().traceId);
        const bad = items.find((i) => i.args.n === 1);
        return { failed: bad === undefined ? [] : [{ jobId: bad.jobId, error: new Error('row 1 is bad') }] };
      },
    });
    const producer = createProducer({ queueUrl, jobs: [job] }, LOCAL_ENV);
    // Three requests, three traces.
    const sent = [];
    for (const n of [0, 1, 2]) {
      sent.push(
        await tracer.startActiveSpan(`request ${n}`, { root: true }, async (span) => {
          const r = await producer.enqueue(job, { n });
          span.end();
          return r;
        }),
      );
    }
    producer.close();
    const worker = start({ queues: [queueUrl], jobs: [job] });
    const events = recordEvents(worker);
    await worker.start();
    await eventually(() => events.count('batch:end') >= 1, 'the batch to run', 20_000);
    await worker.stop();
    const [batch] = otel.named('process trace-index');
    expect(batch).toBeDefined();
    expect(batch!.parentSpanContext).toBeUndefined();
    expect(batch!.attributes).toMatchObject({ 'messaging.batch.message_count': 3, 'sqs_jobs.batch.key': 'trace-index' });
    const sends = sent.map((r) => otel.ofJob('send ', r.jobId)[0]!);
    expect(new Set(sends.map((s) => s.spanContext().traceId)).size).toBe(3);
    expect(batch!.links.map((l) => l.context.spanId).sort()).toEqual(sends.map((s) => s.spanContext().spanId).sort());
    for (const r of sent) {
      const link = batch!.links.find((l) => l.attributes?.['sqs_jobs.job.id'] === r.jobId);
      expect(link?.attributes?.['messaging.message.id']).toBe(r.messageId);
    }
    expect(batch!.status.code).toBe(0); // the call returned; one item failed alone
    const retry = batch!.events.find((e) => e.name === 'sqs_jobs.retry');
    expect(retry?.attributes).toMatchObject({ 'sqs_jobs.job.id': sent[1]!.jobId, 'sqs_jobs.error.message': 'row 1 is bad' });
    expect(active[0]).toBe(batch!.spanContext().traceId); // the handler runs inside it
  });

  it("a fan-out's children run in the parent's trace, and its completion is sent there by whichever worker counts the last child", async () => {
    const { queueUrl } = await freshQueues(sqs, 'trace-fanout');
    const done = defineJob({ name: 'trace-import-done', args: fanOutResultSchema, handle: () => {} });
    const child = defineJob({ name: 'trace-row', args: z.object({ row: z.number() }), handle: () => {} });
    const parent = defineJob({
      name: 'trace-import',
      args: z.object({ rows: z.number() }),
      handle: ({ rows }, ctx) =>
        ctx.fanOut(
          child,
          Array.from({ length: rows }, (_, row) => ({ row })),
          { onComplete: { job: done } },
        ),
    });
    const producer = createProducer({ queueUrl, jobs: [parent], store }, LOCAL_ENV);
    const { jobId: parentId } = await tracer.startActiveSpan('POST /imports', async (span) => {
      const r = await producer.enqueue(parent, { rows: 6 });
      span.end();
      return r;
    });
    producer.close();
    // Two workers of one fleet (one lock key space): the last child may be counted by either.
    const options = { queues: [queueUrl], jobs: [parent, child, done], store, concurrency: 4, lockKeyPrefix: `trace-fan-${parentId}:` };
    const a = start(options);
    const b = start(options);
    const events = [recordEvents(a), recordEvents(b)];
    await Promise.all([a.start(), b.start()]);
    await eventually(() => otel.named('process trace-import-done').length === 1, 'the completion job to run', 30_000);
    const [parentRun] = runsUnderSend(parentId);
    const trace = parentRun!.spanContext().traceId;
    const children = otel.named('process trace-row');
    expect(children).toHaveLength(6);
    const childSends = otel.spans().filter((s) => s.name.startsWith('send ') && s.attributes['sqs_jobs.job.name'] === 'trace-row');
    expect(childSends).toHaveLength(1); // one enqueueMany of the three
    for (const send of childSends) expect(send.parentSpanContext?.spanId).toBe(parentRun!.spanContext().spanId);
    for (const run of children) expect(run.spanContext().traceId).toBe(trace);
    const [completionSend] = otel
      .spans()
      .filter((s) => s.name.startsWith('send ') && s.attributes['sqs_jobs.job.name'] === 'trace-import-done');
    expect(completionSend!.parentSpanContext?.spanId).toBe(parentRun!.spanContext().spanId);
    const [completion] = otel.named('process trace-import-done');
    expect(completion!.spanContext().traceId).toBe(trace);
    expect(completion!.parentSpanContext?.spanId).toBe(completionSend!.spanContext().spanId);
    // The completion's span ends with its run; its job:succeeded comes when it is settled, a moment later.
    const succeeded = () => events.reduce((n, e) => n + e.count('job:succeeded'), 0);
    await eventually(() => succeeded() >= 8, 'the completion job settled', 10_000);
    expect(succeeded()).toBe(8);
  });

  it('a duplicate skipped and a poisonous message dead-lettered each leave a span saying so', async () => {
    const { queueUrl } = await freshQueues(sqs, 'trace-unrun');
    const job = defineJob({ name: 'trace-once', args: z.object({}), handle: () => {} });
    const producer = createProducer({ queueUrl, jobs: [job] }, LOCAL_ENV);
    const worker = start({ queues: [queueUrl], jobs: [job] });
    const events = recordEvents(worker);
    await worker.start();
    await producer.enqueue(job, {}, { jobId: 'once-1' });
    await eventually(() => events.count('job:succeeded') === 1, 'the job to run');
    await tracer.startActiveSpan('send again', async (span) => {
      await producer.enqueue(job, {}, { jobId: 'once-1' });
      span.end();
    });
    producer.close();
    await eventually(() => events.count('job:duplicate') === 1, 'the copy to be skipped');
    const [first, copy] = otel.ofJob('process ', 'once-1');
    expect(first!.events).toEqual([]);
    expect(copy!.events.map((e) => [e.name, e.attributes])).toEqual([
      ['sqs_jobs.duplicate_skipped', { 'sqs_jobs.duplicate.state': 'completed' }],
    ]);
    expect(copy!.parentSpanContext?.spanId).toBe(otel.ofJob('send ', 'once-1')[1]!.spanContext().spanId);

    // A job this worker does not know, from an X-Ray producer: poison, dead-lettered, and its trace says why.
    const poison = await sendXrayOnly(queueUrl, 'no-such-job', {});
    await eventually(() => events.count('job:dead-lettered') === 1, 'the poisonous message to be dead-lettered');
    const [span] = runsUnderXray(poison);
    expect(span!.status.code).toBe(2);
    expect(span!.events.find((e) => e.name === 'sqs_jobs.dead_letter')?.attributes).toMatchObject({
      'sqs_jobs.dead_letter.reason': 'unknown-job',
    });
  });
});
