import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ATTR_FIRST_SENT_AT, ATTR_ORIGIN, ATTR_PRIOR_RECEIVES } from '../../../../src/core/delivery.js';
import { ATTR_JOB, ATTR_JOB_ID } from '../../../../src/core/envelope.js';
import { defineEvent } from '../../../../src/core/event.js';
import { defineJob } from '../../../../src/core/job.js';
import { JobRegistry } from '../../../../src/core/job-registry.js';
import type { MessageAttributes, ReceivedMessage } from '../../../../src/core/message.js';
import { readMessage } from '../../../../src/worker/run/read.js';

const jobs = new JobRegistry([defineJob({ name: 'resize', args: z.object({ width: z.number().int().default(100) }), handle: () => {} })]);
const message = (body: string, attributes: MessageAttributes = {}): ReceivedMessage => ({
  queueUrl: 'http://memory.invalid/000000000000/jobs',
  messageId: 'm1',
  receiptHandle: 'h',
  body,
  receiveCount: 1,
  sentAt: 0,
  groupId: undefined,
  attributes,
});
const envelope = (job: string, args: unknown) =>
  JSON.stringify({ v: 1, id: 'j1', job, args, enqueuedAt: '2026-11-24T00:00:00.000Z', tenant: 'acme' });

describe('readMessage: a message decoded and checked once', () => {
  it('a good one: the job, its args with the schema applied, and what events say', () => {
    const read = readMessage(jobs, message(envelope('resize', {}), { [ATTR_PRIOR_RECEIVES]: { DataType: 'Number', StringValue: '2' } }));
    expect(read).toMatchObject({
      ok: true,
      args: { width: 100 },
      info: { jobId: 'j1', jobName: 'resize', messageId: 'm1', attempt: 3, tenant: 'acme' },
    });
  });

  it("a body without an id: the job id is its first message's id, the same on every copy the worker re-sends", () => {
    const body = JSON.stringify({ v: 1, job: 'resize', args: {} });
    expect(readMessage(jobs, message(body))).toMatchObject({
      ok: true,
      info: { jobId: 'm1' },
      envelope: { id: 'm1', enqueuedAt: new Date(0).toISOString() },
    });
    const copy = {
      ...message(body, {
        [ATTR_ORIGIN]: { DataType: 'String', StringValue: 'm0' },
        [ATTR_FIRST_SENT_AT]: { DataType: 'Number', StringValue: '1000' },
      }),
      sentAt: 9_000,
    };
    expect(readMessage(jobs, copy)).toMatchObject({
      ok: true,
      info: { jobId: 'm0' },
      envelope: { id: 'm0', enqueuedAt: new Date(1_000).toISOString() },
    });
  });

  it('args the schema refuses: invalid-args, naming the field', () => {
    expect(readMessage(jobs, message(envelope('resize', { width: 1.5 })))).toMatchObject({
      ok: false,
      reason: 'invalid-args',
      detail: expect.stringContaining('args.width'),
    });
  });

  it('a job this worker does not run: unknown-job, and events say "unknown" (no metric per made-up name)', () => {
    expect(readMessage(jobs, message(envelope('mine', {})))).toMatchObject({
      ok: false,
      reason: 'unknown-job',
      detail: expect.stringContaining('"mine"'),
      info: { jobName: 'unknown', jobId: 'j1' },
    });
  });

  it('a body that is not an envelope: its reason, with the id and name from the attributes where they are', () => {
    const read = readMessage(
      jobs,
      message('not json', {
        [ATTR_JOB]: { DataType: 'String', StringValue: 'resize' },
        [ATTR_JOB_ID]: { DataType: 'String', StringValue: 'j9' },
      }),
    );
    expect(read).toMatchObject({ ok: false, reason: 'invalid-json', info: { jobId: 'j9', jobName: 'resize' } });
    expect(readMessage(jobs, message('{"v":2}'))).toMatchObject({ ok: false, reason: 'unsupported-version', info: { jobId: 'm1' } });
  });
});

describe('readMessage: a job that maps an event payload to its args (`from`)', () => {
  const placed = defineEvent({ name: 'order.placed', payload: z.object({ orderId: z.string(), lines: z.array(z.string()) }) });
  const count = defineJob({
    name: 'count-lines',
    on: placed,
    args: z.object({ order: z.string(), n: z.number().int().positive() }),
    from: (p) => {
      if (p.orderId === 'boom') throw new Error('no mapping for boom');
      return { order: p.orderId, n: p.lines.length };
    },
    handle: (args) => args.n, // typed: the mapped args
  });
  const registry = new JobRegistry([count]);
  const event = (args: unknown) => message(JSON.stringify({ v: 1, id: 'e-1', event: 'order.placed', args }));

  it('an event: the payload checked by its schema, mapped, the result checked by args', () => {
    expect(readMessage(registry, event({ orderId: 'o-1', lines: ['a', 'b'] }))).toMatchObject({
      ok: true,
      args: { order: 'o-1', n: 2 },
      info: { jobId: 'e-1.count-lines' },
    });
  });

  it('a bad payload, a mapping that throws, or a mapped result args refuses: invalid-args, saying which', () => {
    expect(readMessage(registry, event({ orderId: 7, lines: [] }))).toMatchObject({
      ok: false,
      reason: 'invalid-args',
      detail: expect.stringContaining('payload.orderId'),
    });
    expect(readMessage(registry, event({ orderId: 'boom', lines: ['a'] }))).toMatchObject({
      reason: 'invalid-args',
      detail: 'from: threw Error: no mapping for boom',
    });
    expect(readMessage(registry, event({ orderId: 'o', lines: [] }))).toMatchObject({
      reason: 'invalid-args',
      detail: expect.stringContaining('args.n'),
    });
  });

  it('enqueued directly, it takes its own args, not the payload', () => {
    expect(readMessage(registry, message(envelope('count-lines', { order: 'o-2', n: 1 })))).toMatchObject({
      ok: true,
      args: { order: 'o-2', n: 1 },
    });
  });

  it('from without on is refused, naming it', () => {
    expect(() => defineJob({ name: 'x', args: z.object({}), from: () => ({}), handle: () => {} } as never)).toThrow(
      /job\.from: maps an event payload/,
    );
  });
});
