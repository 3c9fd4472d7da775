import { describe, expect, it } from 'vitest';
import { decodeEnvelope, encodeEnvelope, envelopeAttributes } from '../../../src/core/envelope.js';
import { messageSize } from '../../../src/core/sqs-text.js';

const fallback = { messageId: 'msg-1', sentAt: Date.parse('2026-01-02T03:04:05.000Z') };

describe('envelope v1', () => {
  it('encodes the documented fields in order and decodes them back', () => {
    const body = encodeEnvelope({
      v: 1,
      id: 'job-1',
      job: 'resize',
      args: { w: 10 },
      enqueuedAt: '2026-01-01T00:00:00.000Z',
      tenant: 't1',
    });
    expect(body).toBe('{"v":1,"id":"job-1","job":"resize","args":{"w":10},"enqueuedAt":"2026-01-01T00:00:00.000Z","tenant":"t1"}');
    const decoded = decodeEnvelope(body, fallback);
    expect(decoded).toEqual({
      ok: true,
      envelope: { v: 1, id: 'job-1', job: 'resize', args: { w: 10 }, enqueuedAt: '2026-01-01T00:00:00.000Z', tenant: 't1' },
    });
  });

  it("takes an occurrence fired elsewhere (EventBridge Scheduler's scheduled time): its job id is the occurrence's, and it waited from its time", () => {
    const body = '{"v":1,"job":"report","args":{},"schedule":"nightly","scheduledAt":"2027-03-28T01:00:00Z","track":true}';
    // Delivered twice (EventBridge fires at least once): the same job id both times.
    for (const messageId of ['m-1', 'm-2'])
      expect(decodeEnvelope(body, { messageId, sentAt: Date.parse('2027-03-28T01:00:01Z') })).toEqual({
        ok: true,
        envelope: { v: 1, id: 'nightly:1806195600', job: 'report', args: {}, enqueuedAt: '2027-03-28T01:00:00.000Z', track: true },
      });
  });

  it('omits tenant when there is none', () => {
    expect(encodeEnvelope({ v: 1, id: 'a', job: 'j', args: {}, enqueuedAt: '2026-01-01T00:00:00.000Z' })).not.toContain('tenant');
  });

  it('falls back to the SQS MessageId and SentTimestamp when the body has no id or time', () => {
    const decoded = decodeEnvelope('{"v":1,"job":"resize","args":{}}', fallback);
    expect(decoded.ok && decoded.envelope.id).toBe('msg-1');
    expect(decoded.ok && decoded.envelope.enqueuedAt).toBe('2026-01-02T03:04:05.000Z');
  });

  it.each([
    ['not json {', 'invalid-json'],
    ['[1,2]', 'not-an-envelope'],
    ['"text"', 'not-an-envelope'],
    ['{"v":2,"job":"a","args":{}}', 'unsupported-version'],
    ['{"job":"a","args":{}}', 'unsupported-version'],
    ['{"v":1,"args":{}}', 'not-an-envelope'],
    ['{"v":1,"job":"a","args":{},"id":"has space"}', 'not-an-envelope'],
    ['{"v":1,"job":"a","args":{},"enqueuedAt":"yesterday"}', 'not-an-envelope'],
    ['{"v":1,"job":"a","args":{},"schedule":"nightly"}', 'not-an-envelope'],
    ['{"v":1,"job":"a","args":{},"scheduledAt":"2027-03-28T01:00:00Z"}', 'not-an-envelope'],
    ['{"v":1,"id":"x","job":"a","args":{},"schedule":"nightly","scheduledAt":"2027-03-28T01:00:00Z"}', 'not-an-envelope'],
    ['{"v":1,"event":"e","args":{},"schedule":"nightly","scheduledAt":"2027-03-28T01:00:00Z"}', 'not-an-envelope'],
    ['{"v":1,"job":"a","args":{},"schedule":"nightly","scheduledAt":"<aws.scheduler.scheduled-time>"}', 'not-an-envelope'],
  ])('calls %s poison: %s', (body, reason) => {
    const decoded = decodeEnvelope(body, fallback);
    expect(decoded.ok).toBe(false);
    if (!decoded.ok) {
      expect(decoded.reason).toBe(reason);
      expect(decoded.detail.length).toBeGreaterThan(0);
    }
  });

  it('survives deeply nested JSON without throwing', () => {
    const deep = '['.repeat(200_000) + ']'.repeat(200_000);
    expect(decodeEnvelope(deep, fallback).ok).toBe(false);
  });

  it('counts attribute names, types and values in the message size, in UTF-8 bytes', () => {
    const body = '{"x":"é"}';
    const attributes = envelopeAttributes({ v: 1, id: 'id', job: 'job', args: {}, enqueuedAt: '' });
    const expected = Buffer.byteLength(body) + 'sqsjobs-job'.length + 6 + 3 + 'sqsjobs-id'.length + 6 + 2;
    expect(messageSize(body, attributes)).toBe(expected);
  });
});
