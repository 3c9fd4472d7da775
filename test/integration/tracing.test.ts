import { context, propagation, ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { EnqueueBatchError, UnrecoverableError } from '../../src/core/errors.js';
import { defineJob } from '../../src/core/job.js';
import { parseTraceparent } from '../../src/core/trace-context.js';
import { createProducer } from '../../src/producer/producer.js';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { LOCAL_ENV, drain, eventually, freshQueues, sqsClient } from '../helpers/stack.js';
import { recordEvents, useWorkers } from '../helpers/worker.js';
import { useOtel } from '../helpers/otel.js';

/*
 * OpenTelemetry on the producer's side, with the real SDK (BasicTracerProvider, in-memory exporter,
 * AsyncLocalStorage context) on LocalStack: the send span, and the context each job carries.
 */

const { exporter, tracer } = useOtel();
const job = defineJob({ name: 'trace-me', args: z.object({ n: z.number() }), handle: () => {} });
const sqs = sqsClient();
let queueUrl: string;
let queueName: string;

beforeAll(async () => {
  ({ queueUrl } = await freshQueues(sqs, 'tracing'));
  queueName = queueUrl.split('/').pop()!;
});
afterAll(() => sqs.destroy());

const bodies = async () => (await drain(sqs, queueUrl)).map((m) => ({ messageId: m.MessageId!, body: JSON.parse(m.Body!) }));

describe('the producer traces its sends', () => {
  it('enqueue makes a send span under the caller, and the job carries that span as its trace parent', async () => {
    const producer = createProducer({ queueUrl, jobs: [job] }, LOCAL_ENV);
    const request = tracer.startSpan('POST /orders');
    const bag = propagation.createBaggage({ 'user.id': { value: 'u 42' } });
    const active = propagation.setBaggage(trace.setSpan(ROOT_CONTEXT, request), bag);
    const result = await context.with(active, () => producer.enqueue(job, { n: 1 }, { tenant: 'acme' }));
    request.end();
    producer.close();

    const send = exporter.getFinishedSpans().find((s) => s.name === `send ${queueName}`);
    expect(send).toBeDefined();
    expect(send!.kind).toBe(SpanKind.PRODUCER);
    expect(send!.spanContext().traceId).toBe(request.spanContext().traceId);
    expect(send!.parentSpanContext?.spanId).toBe(request.spanContext().spanId);
    expect(send!.attributes).toMatchObject({
      'messaging.system.name': 'aws.sqs',
      'messaging.system': 'aws_sqs',
      'messaging.operation.name': 'send',
      'messaging.operation.type': 'send',
      'messaging.destination.name': queueName,
      'messaging.message.id': result.messageId,
      'aws.sqs.queue.url': queueUrl,
      'sqs_jobs.job.name': 'trace-me',
      'sqs_jobs.job.id': result.jobId,
      'sqs_jobs.tenant': 'acme',
    });
    expect(send!.attributes['messaging.batch.message_count']).toBeUndefined();

    const [m] = await bodies();
    expect(m?.messageId).toBe(result.messageId);
    expect(parseTraceparent(m!.body.trace.traceparent)).toEqual({
      traceId: request.spanContext().traceId,
      spanId: send!.spanContext().spanId,
      sampled: true,
    });
    expect(m!.body.trace.baggage).toBe('user.id=u%2042');
  });

  it('enqueueMany makes one send span with the count, and every job carries it', async () => {
    const producer = createProducer({ queueUrl, jobs: [job] }, LOCAL_ENV);
    await tracer.startActiveSpan('import', async (span) => {
      await producer.enqueueMany(job, [{ n: 1 }, { n: 2 }, { n: 3 }]);
      span.end();
    });
    producer.close();
    const sends = exporter.getFinishedSpans().filter((s) => s.name.startsWith('send '));
    expect(sends).toHaveLength(1);
    expect(sends[0]!.attributes['messaging.batch.message_count']).toBe(3);
    const traces = (await bodies()).map((m) => m.body.trace.traceparent);
    expect(traces).toHaveLength(3);
    expect(new Set(traces).size).toBe(1);
    expect(parseTraceparent(traces[0]!)?.spanId).toBe(sends[0]!.spanContext().spanId);
  });

  it('with no span active the send span is a root; a failed send ends it with an error', async () => {
    const producer = createProducer({ queueUrl, jobs: [job] }, LOCAL_ENV);
    await producer.enqueue(job, { n: 1 });
    const [root] = exporter.getFinishedSpans();
    expect(root?.parentSpanContext).toBeUndefined();
    expect(parseTraceparent((await bodies())[0]!.body.trace.traceparent)?.spanId).toBe(root!.spanContext().spanId);
    producer.close();

    exporter.reset();
    const gone = createProducer({ queueUrl: `${queueUrl}-missing`, jobs: [job] }, LOCAL_ENV);
    await expect(gone.enqueueMany(job, [{ n: 1 }])).rejects.toBeInstanceOf(EnqueueBatchError);
    gone.close();
    const [failed] = exporter.getFinishedSpans();
    expect(failed?.status.code).toBe(2); // SpanStatusCode.ERROR
    expect(failed?.attributes['error.type']).toBe('ENQUEUE_BATCH_PARTIAL');
  });

  it('tracing: false sends no span and no trace field', async () => {
    const producer = createProducer({ queueUrl, jobs: [job], tracing: false }, LOCAL_ENV);
    await tracer.startActiveSpan('quiet', async (span) => {
      await producer.enqueue(job, { n: 1 });
      span.end();
    });
    producer.close();
    expect(exporter.getFinishedSpans().map((s) => s.name)).toEqual(['quiet']);
    expect((await bodies())[0]!.body.trace).toBeUndefined();
  });
});

describe('the worker traces each run of a handler', () => {
  const startWorker = useWorkers();
  const runs: { n: number; active: string | undefined; traceId: string | undefined }[] = [];
  const flaky = defineJob({
    name: 'trace-run',
    args: z.object({ n: z.number() }),
    backoff: { baseMs: 0, factor: 1, capMs: 0, jitter: 0 },
    handle: ({ n }, ctx) => {
      const active = trace.getActiveSpan();
      runs.push({ n, active: active?.spanContext().spanId, traceId: active?.spanContext().traceId });
      // The handler's own span nests under process.
      tracer.startSpan('handler work').end();
      if (n === 1 && ctx.attempt === 1) throw new Error('first attempt fails');
    },
  });
  let workQueue: string;
  // A queue of its own for each test: nothing one leaves behind runs in the next.
  beforeEach(async () => {
    runs.length = 0;
    ({ queueUrl: workQueue } = await freshQueues(sqs, 'tracing-run', { visibilityTimeout: 4, maxReceiveCount: 3 }));
  });
  const processSpans = () => exporter.getFinishedSpans().filter((s) => s.name === 'process trace-run');

  it('process is a CONSUMER span, a child of the send span and linked to it; the handler runs inside it', async () => {
    const producer = createProducer({ queueUrl: workQueue, jobs: [flaky] }, LOCAL_ENV);
    const request = tracer.startSpan('POST /work');
    const result = await context.with(trace.setSpan(ROOT_CONTEXT, request), () => producer.enqueue(flaky, { n: 0 }, { tenant: 'acme' }));
    request.end();
    producer.close();
    startWorker({ queues: [workQueue], jobs: [flaky] }).start();
    await eventually(() => processSpans().length === 1, 'the process span', 20_000);
    const send = exporter.getFinishedSpans().find((s) => s.name.startsWith('send '))!;
    const [processed] = processSpans();
    expect(processed!.kind).toBe(SpanKind.CONSUMER);
    expect(processed!.spanContext().traceId).toBe(request.spanContext().traceId);
    expect(processed!.parentSpanContext?.spanId).toBe(send.spanContext().spanId);
    expect(processed!.links.map((l) => l.context.spanId)).toEqual([send.spanContext().spanId]);
    expect(processed!.status.code).toBe(0); // unset: it succeeded
    expect(processed!.attributes).toMatchObject({
      'messaging.system.name': 'aws.sqs',
      'messaging.operation.name': 'process',
      'messaging.operation.type': 'process',
      'messaging.message.id': result.messageId,
      'sqs_jobs.job.name': 'trace-run',
      'sqs_jobs.job.id': result.jobId,
      'sqs_jobs.attempt': 1,
      'sqs_jobs.tenant': 'acme',
    });
    expect(runs[0]?.active).toBe(processed!.spanContext().spanId);
    const work = exporter.getFinishedSpans().find((s) => s.name === 'handler work')!;
    expect(work.parentSpanContext?.spanId).toBe(processed!.spanContext().spanId);
  });

  it('a retry is a second process span in the same trace; the failed one says so', async () => {
    const producer = createProducer({ queueUrl: workQueue, jobs: [flaky] }, LOCAL_ENV);
    await tracer.startActiveSpan('retry me', async (span) => {
      await producer.enqueue(flaky, { n: 1 });
      span.end();
    });
    producer.close();
    startWorker({ queues: [workQueue], jobs: [flaky] }).start();
    await eventually(() => processSpans().length === 2, 'two process spans', 30_000);
    const send = exporter.getFinishedSpans().find((s) => s.name.startsWith('send '))!;
    const [failed, retried] = processSpans().sort(
      (a, b) => Number(a.attributes['sqs_jobs.attempt']) - Number(b.attributes['sqs_jobs.attempt']),
    );
    for (const run of [failed!, retried!]) {
      expect(run.spanContext().traceId).toBe(send.spanContext().traceId);
      expect(run.parentSpanContext?.spanId).toBe(send.spanContext().spanId);
    }
    expect(failed!.attributes['sqs_jobs.attempt']).toBe(1);
    expect(failed!.status).toMatchObject({ code: 2, message: 'first attempt fails' });
    expect(failed!.events.map((e) => e.name)).toEqual(['exception', 'sqs_jobs.retry']);
    expect(retried!.attributes['sqs_jobs.attempt']).toBe(2);
    expect(retried!.status.code).toBe(0);
  });

  it('a job sent to the DLQ ends its span with the reason; a worker with tracing: false makes no span', async () => {
    const doomed = defineJob({
      name: 'trace-doomed',
      args: z.object({}),
      handle: () => {
        throw new UnrecoverableError('the order no longer exists');
      },
    });
    const producer = createProducer({ queueUrl: workQueue, jobs: [doomed, flaky] }, LOCAL_ENV);
    await producer.enqueue(doomed, {});
    const worker = startWorker({ queues: [workQueue], jobs: [doomed, flaky] });
    const events = recordEvents(worker);
    await worker.start();
    await eventually(() => events.count('job:dead-lettered') === 1, 'the dead letter', 20_000);
    await worker.stop();
    const [span] = exporter.getFinishedSpans().filter((s) => s.name === 'process trace-doomed');
    expect(span?.status).toMatchObject({ code: 2, message: 'the order no longer exists' });
    const dead = span?.events.find((e) => e.name === 'sqs_jobs.dead_letter');
    expect(dead?.attributes).toMatchObject({ 'sqs_jobs.dead_letter.reason': 'unrecoverable' });

    exporter.reset();
    await producer.enqueue(flaky, { n: 0 });
    producer.close();
    const quiet = startWorker({ queues: [workQueue], jobs: [doomed, flaky], tracing: false });
    const quietEvents = recordEvents(quiet);
    await quiet.start();
    await eventually(() => quietEvents.count('job:succeeded') === 1, 'the job', 20_000);
    expect(exporter.getFinishedSpans().filter((s) => s.name.startsWith('process '))).toEqual([]);
    expect(runs.at(-1)?.active).toBeUndefined();
  });

  it('a malformed trace field is ignored: the job runs, in a trace of its own', async () => {
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: workQueue,
        MessageBody: JSON.stringify({
          v: 1,
          id: `bad-trace-${Date.now()}`,
          job: 'trace-run',
          args: { n: 0 },
          trace: { traceparent: 'ff-nope' },
        }),
      }),
    );
    startWorker({ queues: [workQueue], jobs: [flaky] }).start();
    await eventually(() => processSpans().length === 1, 'the process span', 20_000);
    const [processed] = processSpans();
    expect(processed!.parentSpanContext).toBeUndefined();
    expect(processed!.links).toEqual([]);
    expect(processed!.status.code).toBe(0);
  });

  it('a message with only an X-Ray AWSTraceHeader runs in that trace', async () => {
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: workQueue,
        MessageBody: JSON.stringify({ v: 1, id: `xray-${Date.now()}`, job: 'trace-run', args: { n: 0 } }),
        MessageSystemAttributes: {
          AWSTraceHeader: { DataType: 'String', StringValue: 'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1' },
        },
      }),
    );
    startWorker({ queues: [workQueue], jobs: [flaky] }).start();
    await eventually(() => processSpans().length === 1, 'the process span', 20_000);
    const [processed] = processSpans();
    expect(processed!.spanContext().traceId).toBe('5759e988bd862e3fe1be46a994272793');
    expect(processed!.parentSpanContext?.spanId).toBe('53995c3f42cd8ad8');
    expect(processed!.parentSpanContext?.traceFlags).toBe(1); // Sampled=1
  });
});
