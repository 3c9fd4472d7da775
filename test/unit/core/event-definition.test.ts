import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { decodeEnvelope, type EventRouting } from '../../../src/core/envelope.js';
import { defineEvent, subscriberQueueNameFor } from '../../../src/core/event.js';
import { defineJob, JobRegistry } from '../../../src/core/job.js';
import { prepareEvent } from '../../../src/producer/publish.js';
import { eventRoutingFor } from '../../../src/worker/run/event-routing.js';

const placed = defineEvent({ name: 'order.placed', payload: z.object({ orderId: z.string() }) });
const fallback = { messageId: 'm-1', sentAt: new Date('2026-11-26T10:00:00Z') };
const Q = (name: string) => `http://127.0.0.1:4566/000000000000/${name}`;

describe('defineEvent', () => {
  it('names its topic after the event (. as -), or as told; refuses a bad name or ARN, naming the field', () => {
    expect(placed.topic).toBe('order-placed');
    expect(defineEvent({ name: 'a', payload: z.object({}), topic: 'shared_orders' }).topic).toBe('shared_orders');
    expect(defineEvent({ name: 'a', payload: z.object({}), topicArn: 'arn:aws:sns:eu-west-1:123456789012:orders' }).topic).toBe('orders');
    expect(() => defineEvent({ name: 'order placed', payload: z.object({}) })).toThrow(/event\.name: must be 1-80 characters/);
    expect(() => defineEvent({ name: 'a', payload: z.object({}), topicArn: 'orders' })).toThrow(
      /event\.topicArn: must be an SNS topic ARN/,
    );
    expect(() => defineEvent({ name: 'a', payload: {} as z.ZodType })).toThrow(/event\.payload: must be a zod schema/);
  });

  it('a job on an event takes its payload as args, and its filter policy; a bad `on` is named', () => {
    const job = defineJob({ name: 'reserve', on: [placed, { region: ['eu'] }], handle: () => {} });
    expect(job.args).toBe(placed.payload);
    expect(job.on).toEqual({ event: placed, filter: { region: ['eu'] } });
    expect(() => defineJob({ name: 'x', args: z.object({}), on: 'order.placed' as never, handle: () => {} })).toThrow(/job\.on/);
    expect(subscriberQueueNameFor('billing.charge:v2')).toBe('billing-charge-v2');
  });
});

describe('reading events', () => {
  const reserve = defineJob({ name: 'reserve', on: placed, handle: () => {} });
  const confirm = defineJob({ name: 'confirm.email', on: placed, handle: () => {} });
  const one = eventRoutingFor(new JobRegistry([reserve]), Q('anything'));
  const body = JSON.stringify({ v: 1, id: 'e-1', event: 'order.placed', args: { orderId: 'o' } });

  it('an event runs the job that subscribes to it, under the job id <event id>.<job name>', () => {
    const d = decodeEnvelope(body, fallback, one);
    expect(d).toMatchObject({ ok: true, envelope: { id: 'e-1.reserve', job: 'reserve', event: { name: 'order.placed', id: 'e-1' } } });
  });

  it('where several jobs here subscribe, the one whose queue it is; else the message is an unknown job, saying why', () => {
    const jobs = new JobRegistry([reserve, confirm]);
    expect(decodeEnvelope(body, fallback, eventRoutingFor(jobs, Q('confirm-email')))).toMatchObject({ envelope: { job: 'confirm.email' } });
    expect(decodeEnvelope(body, fallback, eventRoutingFor(jobs, Q('other')))).toMatchObject({
      ok: false,
      reason: 'unknown-job',
      detail: expect.stringMatching(/several jobs here subscribe/),
    });
    expect(decodeEnvelope(body.replace('order.placed', 'order.shipped'), fallback, one)).toMatchObject({
      ok: false,
      reason: 'unknown-job',
    });
  });

  it('reads an SNS notification from a topic of its events only; a broken one is invalid JSON', () => {
    const wrap = (topicArn: string, message: string) =>
      JSON.stringify({ Type: 'Notification', TopicArn: topicArn, MessageId: 'n', Message: message });
    expect(decodeEnvelope(wrap('arn:aws:sns:us-east-1:000000000000:order-placed', body), fallback, one)).toMatchObject({
      ok: true,
      envelope: { job: 'reserve' },
    });
    expect(decodeEnvelope(wrap('arn:aws:sns:us-east-1:000000000000:payments', body), fallback, one)).toMatchObject({
      ok: false,
      reason: 'unknown-topic',
    });
    expect(decodeEnvelope(wrap('arn:aws:sns:us-east-1:000000000000:order-placed', '{'), fallback, one)).toMatchObject({
      ok: false,
      reason: 'invalid-json',
    });
    const noRouting: EventRouting | undefined = undefined;
    expect(decodeEnvelope(body, fallback, noRouting)).toMatchObject({ ok: false, reason: 'unknown-job' });
    expect(decodeEnvelope('{"v":1,"args":{}}', fallback, one)).toMatchObject({ ok: false, reason: 'not-an-envelope' });
  });
});

describe('prepareEvent (publish, before anything is sent)', () => {
  const topics = { region: 'eu-west-1', account: '123456789012', maxMessageBytes: 65_536 };
  it('makes the event message, its attributes (for filter policies) and its topic ARN', () => {
    const p = prepareEvent(placed, { orderId: 'o' }, { id: 'e-9', tenant: 'acme', attributes: { region: 'eu' } }, topics);
    expect(p.topicArn).toBe('arn:aws:sns:eu-west-1:123456789012:order-placed');
    expect(JSON.parse(p.body)).toMatchObject({ v: 1, id: 'e-9', event: 'order.placed', args: { orderId: 'o' }, tenant: 'acme' });
    expect(Object.fromEntries(Object.entries(p.attributes).map(([k, a]) => [k, a.StringValue]))).toEqual({
      'sqsjobs-event': 'order.placed',
      'sqsjobs-id': 'e-9',
      'sqsjobs-tenant': 'acme',
      region: 'eu',
    });
  });

  it('refuses what SQS could not carry: too many attributes, reserved names; and a topic it cannot name', () => {
    const eight = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`a${i}`, 'x']));
    expect(() => prepareEvent(placed, { orderId: 'o' }, { attributes: eight }, topics)).toThrow(/options\.attributes: at most 7/);
    expect(() => prepareEvent(placed, { orderId: 'o' }, { attributes: { 'AWS.x': 'y' } }, topics)).toThrow(/reserved/);
    expect(() => prepareEvent(placed, { orderId: 'o' }, {}, { ...topics, account: undefined })).toThrow(/options\.events\.account/);
  });
});
