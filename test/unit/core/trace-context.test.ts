import { describe, expect, it } from 'vitest';
import { decodeEnvelope, encodeEnvelope } from '../../../src/core/envelope.js';
import { fromAwsTraceHeader, MAX_TRACESTATE, parseTraceparent } from '../../../src/core/trace-context.js';

const TP = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const fallback = { messageId: 'm-1', sentAt: 0 };
const body = (trace: unknown) => JSON.stringify({ v: 1, id: 'j1', job: 'x', args: {}, enqueuedAt: '2026-11-27T00:00:00.000Z', trace });

describe('trace context in the envelope', () => {
  it('is read and written back unchanged', () => {
    const trace = { traceparent: TP, tracestate: 'vendor=a,other=b', baggage: 'user=42' };
    const decoded = decodeEnvelope(body(trace), fallback);
    expect(decoded).toMatchObject({ ok: true, envelope: { trace } });
    if (!decoded.ok) throw new Error('not ok');
    expect(JSON.parse(encodeEnvelope(decoded.envelope)).trace).toEqual(trace);
  });

  it('a malformed one is dropped, never poison', () => {
    for (const trace of [
      'not an object',
      42,
      { traceparent: 'garbage' },
      { traceparent: TP.toUpperCase() },
      { traceparent: '00-00000000000000000000000000000000-00f067aa0ba902b7-01' },
      { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01' },
      { traceparent: `${TP}-extra` },
      { tracestate: 'a=b' },
    ]) {
      const decoded = decodeEnvelope(body(trace), fallback);
      expect(decoded.ok, JSON.stringify(trace)).toBe(true);
      if (decoded.ok) expect(decoded.envelope.trace).toBeUndefined();
    }
  });

  it('keeps a good traceparent and drops only an oversized or unprintable tracestate or baggage', () => {
    const decoded = decodeEnvelope(body({ traceparent: TP, tracestate: 'x'.repeat(MAX_TRACESTATE + 1), baggage: 'a=\u0001' }), fallback);
    expect(decoded).toMatchObject({ ok: true, envelope: { trace: { traceparent: TP } } });
    if (decoded.ok) expect(decoded.envelope.trace).toEqual({ traceparent: TP });
  });

  it('an envelope without one has none, and encodes none', () => {
    const decoded = decodeEnvelope(body(undefined), fallback);
    if (!decoded.ok) throw new Error('not ok');
    expect(decoded.envelope.trace).toBeUndefined();
    expect(encodeEnvelope(decoded.envelope)).not.toContain('trace');
  });
});

describe('parseTraceparent', () => {
  it('reads the ids and the sampled flag', () => {
    expect(parseTraceparent(TP)).toEqual({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', sampled: true });
    expect(parseTraceparent(TP.replace(/01$/, '00'))?.sampled).toBe(false);
    // A later version is read by its version-00 prefix; ff is never valid.
    expect(parseTraceparent('01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-more')?.traceId).toBe(
      '4bf92f3577b34da6a3ce929d0e0e4736',
    );
    expect(parseTraceparent('ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')).toBeUndefined();
  });
});

describe('fromAwsTraceHeader', () => {
  it('maps an X-Ray header to a W3C traceparent', () => {
    expect(fromAwsTraceHeader('Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1')).toEqual({
      traceparent: '00-5759e988bd862e3fe1be46a994272793-53995c3f42cd8ad8-01',
    });
    expect(
      fromAwsTraceHeader('Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=0;Lineage=a:1')?.traceparent,
    ).toMatch(/-00$/);
    expect(fromAwsTraceHeader('Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8')?.traceparent).toMatch(/-00$/);
  });

  it('is undefined without a good root or parent', () => {
    for (const header of [
      undefined,
      '',
      'Root=1-5759e988-bd862e3fe1be46a994272793',
      'Parent=53995c3f42cd8ad8;Sampled=1',
      'Root=2-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1',
      'Root=1-5759e988-bd862e3f;Parent=53995c3f42cd8ad8;Sampled=1',
      'Root=1-5759e988-bd862e3fe1be46a994272793;Parent=xyz;Sampled=1',
      'Root=1-00000000-000000000000000000000000;Parent=53995c3f42cd8ad8;Sampled=1',
      `Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1;${'x'.repeat(300)}`,
    ]) {
      expect(fromAwsTraceHeader(header), String(header)).toBeUndefined();
    }
  });
});
