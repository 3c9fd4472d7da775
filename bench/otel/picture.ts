/**
 * The picture of a trace in docs/guide/tracing.md (docs/trace.svg and .png), drawn from a real run: a request
 * enqueues an import; its first run fails and is retried; the second reads its file (a span of the
 * handler's own) and fans out three rows, one of which fails once; the last row counted sends the
 * completion job. The OpenTelemetry SDK records every span in memory; the picture is those spans,
 * one row each, in trace order, with the events the runs ended with. ElasticMQ, memcached and
 * DynamoDB Local come from run.sh.
 */
import { randomUUID } from 'node:crypto';
import { SQSClient } from '@aws-sdk/client-sqs';
import { context, SpanKind, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import pino from 'pino';
import type { TopLevelSpec } from 'vega-lite';
import { z } from 'zod';
import { createDynamoClient } from '../../src/adapters/aws-clients.js';
import { createJobTable } from '../../src/adapters/dynamodb-store.js';
import { createProducer, createQueues, createWorker, defineJob, fanOutResultSchema } from '../../src/index.js';
import { renderChart } from '../lib/render.js';

const EMQ = process.env.SQS_JOBS_ELASTICMQ_URL ?? 'http://127.0.0.1:9724';
const MEMCACHED = process.env.SQS_JOBS_MEMCACHED ?? '127.0.0.1:11711';
const DYNAMODB = process.env.AWS_ENDPOINT_URL_DYNAMODB ?? 'http://127.0.0.1:4769';
const CREDENTIALS = { AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'x' };
const out = process.env.TRACE_PICTURE ?? 'docs/trace';
/** Where the span names start, in pixels left of the plot. */
const LABELS_AT = -290;

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
trace.setGlobalTracerProvider(provider);
const tracer = trace.getTracer('orders-api');

const sqs = new SQSClient({ endpoint: EMQ, region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
const { queueUrl } = await createQueues(sqs, { name: `imports-${randomUUID().slice(0, 8)}`, maxReceiveCount: 5 });
const dynamo = createDynamoClient({ endpoint: DYNAMODB, region: 'us-east-1' }, {}, CREDENTIALS);
const table = `trace-picture-${randomUUID().slice(0, 8)}`;
await createJobTable(dynamo, table);
const store = { table, endpoint: DYNAMODB };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let completed = false;
const done = defineJob({
  name: 'import-done',
  args: fanOutResultSchema,
  handle: () => {
    completed = true;
  },
});
const row = defineJob({
  name: 'import-row',
  args: z.object({ row: z.number() }),
  backoff: { baseMs: 150, factor: 1, capMs: 150, jitter: 0 },
  handle: async ({ row }, ctx) => {
    await sleep(40 + 30 * row);
    if (row === 1 && ctx.attempt === 1) throw new Error('row 1: the warehouse API answered 503');
  },
});
const importFile = defineJob({
  name: 'import-file',
  args: z.object({ key: z.string() }),
  backoff: { baseMs: 200, factor: 1, capMs: 200, jitter: 0 },
  handle: async ({ key }, ctx) => {
    if (ctx.attempt === 1) {
      await sleep(60);
      throw new Error('S3 GetObject timed out');
    }
    await tracer.startActiveSpan(`read ${key}`, async (span) => {
      await sleep(80);
      span.end();
    });
    return ctx.fanOut(row, [{ row: 0 }, { row: 1 }, { row: 2 }], { onComplete: { job: done } });
  },
});

const worker = createWorker(
  {
    queues: [queueUrl],
    jobs: [importFile, row, done],
    concurrency: 4,
    waitTimeSeconds: 1,
    endpoint: EMQ,
    region: 'us-east-1',
    memcached: MEMCACHED,
    store,
    metrics: { sink: 'off' },
    logger: pino({ level: 'error' }), // the failures are on purpose
    handleSignals: false,
  },
  CREDENTIALS,
);
await worker.start();
const producer = createProducer({ queueUrl, endpoint: EMQ, region: 'us-east-1', store }, CREDENTIALS);
await tracer.startActiveSpan('POST /imports', { kind: SpanKind.SERVER }, async (span) => {
  await producer.enqueue(importFile, { key: 's3://uploads/orders.csv' }, { tenant: 'acme' });
  span.end();
});
producer.close();
const deadline = Date.now() + 60_000;
while (!completed) {
  if (Date.now() > deadline) throw new Error('the completion job did not run within 60 s');
  await sleep(50);
}
await sleep(200); // its span ends after the handler returns
await worker.stop();
sqs.destroy();
dynamo.destroy();

const spans = exporter.getFinishedSpans();
const traces = new Set(spans.map((s) => s.spanContext().traceId));
if (traces.size !== 1) throw new Error(`expected one trace, got ${traces.size}`);
await renderChart(waterfall(spans), out);
console.log(`${spans.length} spans in one trace; picture: ${out}.svg, ${out}.png`);
await provider.shutdown();

/** The spans in trace order (each under its parent, siblings by start), one bar each, with their events as marks. */
function waterfall(all: readonly ReadableSpan[]): TopLevelSpec {
  const ms = (t: [number, number]) => t[0] * 1_000 + t[1] / 1e6;
  const t0 = Math.min(...all.map((s) => ms(s.startTime)));
  const byParent = new Map<string | undefined, ReadableSpan[]>();
  for (const s of all) {
    const parent = s.parentSpanContext?.spanId;
    byParent.set(parent, [...(byParent.get(parent) ?? []), s]);
  }
  const ordered: { span: ReadableSpan; depth: number }[] = [];
  const visit = (parent: string | undefined, depth: number) => {
    for (const s of (byParent.get(parent) ?? []).sort((a, b) => ms(a.startTime) - ms(b.startTime))) {
      ordered.push({ span: s, depth });
      visit(s.spanContext().spanId, depth + 1);
    }
  };
  visit(undefined, 0);
  const kindOf = (s: ReadableSpan) =>
    s.status.code === 2 ? 'failed' : s.kind === SpanKind.PRODUCER ? 'send' : s.kind === SpanKind.CONSUMER ? 'process' : 'app';
  const rows = ordered.map(({ span: s, depth }, i) => {
    const attempt = s.attributes['sqs_jobs.attempt'];
    const id = String(s.attributes['sqs_jobs.job.id'] ?? '');
    const child = /\.c\d+$/.exec(id)?.[0] ?? '';
    const label = `${s.name}${child}${typeof attempt === 'number' && attempt > 1 ? ` (attempt ${attempt})` : ''}`;
    const start = ms(s.startTime) - t0;
    // At least a few pixels wide: a completion that takes a millisecond is still seen.
    return { order: i, label, indent: LABELS_AT + 14 * depth, start, end: Math.max(ms(s.endTime) - t0, start + 15), kind: kindOf(s) };
  });
  const marks = ordered.flatMap(({ span: s }, i) =>
    s.events
      .filter((e) => e.name.startsWith('sqs_jobs.'))
      .map((e) => ({ order: i, at: ms(e.time) - t0, text: e.name.replace('sqs_jobs.', '') })),
  );
  // One row per span, by its place in the order (names repeat); its name is drawn left of the plot, indented under its parent.
  const y = { field: 'order', type: 'ordinal' as const, title: null, axis: { labels: false, ticks: false } };
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: { text: 'One trace: the request, its job, a retry, a fan-out and its completion', fontSize: 14 },
    width: 520,
    height: rows.length * 22,
    layer: [
      {
        data: { values: rows },
        mark: { type: 'bar', height: 14, cornerRadius: 2 },
        encoding: {
          y,
          x: { field: 'start', type: 'quantitative', title: 'ms since the request began' },
          x2: { field: 'end' },
          color: {
            field: 'kind',
            type: 'nominal',
            title: null,
            scale: { domain: ['app', 'send', 'process', 'failed'], range: ['#7f7f7f', '#1f77b4', '#2ca02c', '#d62728'] },
            legend: {
              orient: 'bottom',
              labelExpr: "{app: 'your spans', send: 'send (PRODUCER)', process: 'process (CONSUMER)', failed: 'failed run'}[datum.label]",
            },
          },
        },
      },
      {
        data: { values: rows },
        mark: { type: 'text', align: 'left', fontSize: 12, color: '#000' },
        encoding: { y, x: { field: 'indent', type: 'quantitative', scale: null }, text: { field: 'label' } },
      },
      {
        data: { values: marks },
        mark: { type: 'text', align: 'left', dx: 6, fontSize: 11, color: '#333' },
        encoding: { y, x: { field: 'at', type: 'quantitative' }, text: { field: 'text' } },
      },
    ],
  };
}
