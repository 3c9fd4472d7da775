import { context, propagation, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import * as api from '@opentelemetry/api';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { OtelProcessTracing } from '../../../src/adapters/otel-process.js';
import { OtelSendTracing } from '../../../src/adapters/otel-send.js';
import { MAX_BAGGAGE } from '../../../src/core/trace-context.js';
import { useOtel } from '../../helpers/otel.js';

/* The OpenTelemetry adapters with the real SDK (no servers): what a job carries, and how a run reads it back. */

const { exporter, tracer } = useOtel();
const info = {
  jobId: 'j-1',
  jobName: 'thumb',
  messageId: 'm-1',
  queueUrl: 'http://localhost/000000000000/work',
  attempt: 1,
  tenant: undefined,
};

describe('OpenTelemetry adapters', () => {
  it('a run reads back what a send carried: the trace, its tracestate, the baggage', async () => {
    const sends = new OtelSendTracing(api);
    const parent = tracer.startSpan('request');
    const bag = propagation.createBaggage({ tenant: { value: 'acme' }, 'odd key': { value: 'a,b;c' } });
    const sent = context.with(propagation.setBaggage(trace.setSpan(ROOT_CONTEXT, parent), bag), () =>
      sends.send(info.queueUrl, 'thumb', undefined, undefined),
    );
    sent.sent(info.queueUrl, { jobId: 'j-1', messageId: 'm-1' });
    parent.end();
    expect(sent.trace?.baggage).toBe('tenant=acme,odd%20key=a%2Cb%3Bc');

    const run = new OtelProcessTracing(api).process(info, { ...sent.trace!, tracestate: 'vendor=x' });
    const inside = run.within(() => ({ span: trace.getActiveSpan(), baggage: propagation.getActiveBaggage() }));
    run.ended(undefined);
    const processed = exporter.getFinishedSpans().find((s) => s.name === 'process thumb')!;
    expect(inside.span?.spanContext().spanId).toBe(processed.spanContext().spanId);
    expect(inside.baggage?.getEntry('odd key')?.value).toBe('a,b;c');
    expect(inside.baggage?.getEntry('tenant')?.value).toBe('acme');
    expect(processed.parentSpanContext?.traceState?.get('vendor')).toBe('x');
    expect(processed.spanContext().traceId).toBe(parent.spanContext().traceId);
  });

  it('baggage is cut at whole members to fit its bound', () => {
    const entries = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`k${i}`, { value: 'v'.repeat(40) }]));
    const sent = context.with(propagation.setBaggage(ROOT_CONTEXT, propagation.createBaggage(entries)), () =>
      new OtelSendTracing(api).send(info.queueUrl, 'thumb', 100, undefined),
    );
    sent.sent(info.queueUrl, undefined);
    const baggage = sent.trace!.baggage!;
    expect(baggage.length).toBeLessThanOrEqual(MAX_BAGGAGE);
    expect(baggage.split(',').every((m) => /^k\d+=v{40}$/.test(m))).toBe(true);
  });

  it('a baggage member that cannot be read is skipped; a failed run says how; a job without a trace starts its own', () => {
    const run = new OtelProcessTracing(api).process(info, {
      traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      baggage: 'ok=1,%E0%A4%A=2,=3,__proto__=4',
    });
    const bag = run.within(() => propagation.getActiveBaggage());
    run.ended(new Error('boom'), { name: 'sqs_jobs.retry', attributes: { 'sqs_jobs.retry.delay_ms': 1000 } });
    const [span] = exporter.getFinishedSpans();
    expect(span?.parentSpanContext?.spanId).toBe('00f067aa0ba902b7');
    expect(bag?.getAllEntries().map(([k, e]) => [k, e.value])).toEqual([
      ['ok', '1'],
      ['__proto__', '4'],
    ]);
    expect(span?.status).toMatchObject({ code: 2, message: 'boom' });
    expect(span?.events.map((e) => e.name)).toEqual(['exception', 'sqs_jobs.retry']);

    exporter.reset();
    const root = new OtelProcessTracing(api).process(info, undefined);
    root.ended(undefined);
    expect(exporter.getFinishedSpans()[0]?.parentSpanContext).toBeUndefined();
  });

  it('active() answers the span a handler runs in; resume() puts a carried context back for a later send', () => {
    const tracing = new OtelProcessTracing(api);
    expect(tracing.active()).toBeUndefined();
    const run = tracing.process(info, undefined);
    const carried = run.within(() => tracing.active());
    run.ended(undefined);
    const [processed] = exporter.getFinishedSpans();
    expect(carried?.traceparent).toBe(`00-${processed!.spanContext().traceId}-${processed!.spanContext().spanId}-01`);

    // Later, elsewhere (the worker that counts a fan-out's last child): a send in the carried trace.
    const later = tracing.resume(carried, () => new OtelSendTracing(api).send(info.queueUrl, 'done', undefined, undefined));
    later.sent(undefined, undefined);
    const send = exporter.getFinishedSpans().find((s) => s.name === 'send work')!;
    expect(send.parentSpanContext?.spanId).toBe(processed!.spanContext().spanId);
    expect(send.spanContext().traceId).toBe(processed!.spanContext().traceId);
    // Nothing carried, or nothing readable: as it is.
    expect(tracing.resume(undefined, () => trace.getActiveSpan())).toBeUndefined();
    expect(tracing.resume({ traceparent: 'nonsense' }, () => trace.getActiveSpan())).toBeUndefined();
  });

  it('a batch span starts its own trace and links to each traced item, with its ids', () => {
    const sender = tracer.startSpan('request');
    const traceparent = `00-${sender.spanContext().traceId}-${sender.spanContext().spanId}-01`;
    const items = [
      { info, trace: { traceparent } },
      { info: { ...info, jobId: 'j-2', messageId: 'm-2' }, trace: undefined },
    ];
    const run = new OtelProcessTracing(api).processBatch('thumb', info.queueUrl, 'k', items);
    run.note({ name: 'sqs_jobs.retry', attributes: { 'sqs_jobs.job.id': 'j-2' } });
    run.ended(undefined);
    const [batch] = exporter.getFinishedSpans();
    expect(batch!.parentSpanContext).toBeUndefined();
    expect(batch!.spanContext().traceId).not.toBe(sender.spanContext().traceId);
    expect(batch!.links).toEqual([
      {
        context: expect.objectContaining({ spanId: sender.spanContext().spanId }),
        attributes: { 'messaging.message.id': 'm-1', 'sqs_jobs.job.id': 'j-1' },
      },
    ]);
    expect(batch!.attributes).toMatchObject({ 'messaging.batch.message_count': 2, 'sqs_jobs.batch.key': 'k' });
    expect(batch!.events.map((e) => e.name)).toEqual(['sqs_jobs.retry']);
  });

  it('a span processor that throws costs the span, never the send', () => {
    const throwing = new BasicTracerProvider({
      spanProcessors: [
        {
          onStart: () => {},
          onEnd: () => {
            throw new Error('exporter bug');
          },
          forceFlush: async () => {},
          shutdown: async () => {},
        },
      ],
    });
    // The real API, its tracer provider one whose processor throws.
    const withThrowing = {
      ...api,
      trace: Object.assign(Object.create(api.trace), { getTracer: (name: string) => throwing.getTracer(name) }),
    };
    const tracing = new OtelSendTracing(withThrowing as typeof api);
    // A run's and a batch's span still end (the processor's throw on end is the API's to report).
    const processes = new OtelProcessTracing(withThrowing as typeof api);
    expect(() => processes.process(info, undefined).ended(new Error('failed'))).toThrow('exporter bug');
    expect(() => processes.processBatch('thumb', info.queueUrl, 'k', [{ info, trace: undefined }]).ended(undefined)).toThrow(
      'exporter bug',
    );
    // A context manager that throws costs the trace, never the send inside resume(), nor its own error.
    const brokenContext = {
      ...api,
      context: Object.assign(Object.create(api.context), {
        with: () => {
          throw new Error('context manager bug');
        },
      }),
    };
    const resumed = new OtelProcessTracing(brokenContext as typeof api);
    const carried = { traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01` };
    expect(resumed.resume(carried, () => 'sent')).toBe('sent');
    expect(() =>
      new OtelProcessTracing(api).resume(carried, () => {
        throw new Error('the send failed');
      }),
    ).toThrow('the send failed');
    const sent = tracing.send(info.queueUrl, 'thumb', undefined, undefined);
    expect(sent.trace?.traceparent).toMatch(/^00-/);
    expect(() => sent.sent(undefined, { jobId: 'j', messageId: 'm' })).not.toThrow();
    const failing = tracing.send(info.queueUrl, 'thumb', undefined, undefined);
    expect(() => failing.failed(new Error('sqs down'))).not.toThrow();
  });
});
