import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { decodeEnvelope, type EventRouting } from '../../../src/core/envelope.js';
import { defineEvent, subscriberQueueNameFor } from '../../../src/core/event.js';
import { defineJob } from '../../../src/core/job.js';
import { JobRegistry } from '../../../src/core/job-registry.js';
import { filterPolicyOf, provisionEvents } from '../../../src/ops/events.js';
import { parsePublishOptions, prepareEvent, publishOptionsSchema } from '../../../src/producer/publish.js';
import { eventRoutingFor } from '../../../src/worker/run/event-routing.js';

const placed = defineEvent({ name: 'order.placed', payload: z.object({ orderId: z.string() }) });
const fallback = { messageId: 'm-1', sentAt: Date.parse('2026-11-26T10:00:00Z') };
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

describe('what a worker refuses to run from an event', () => {
  const reserve = defineJob({ name: 'reserve', on: placed, handle: () => {} });
  const ship = defineJob({ name: 'ship', on: defineEvent({ name: 'order.shipped', payload: z.object({}) }), handle: () => {} });
  const one = eventRoutingFor(new JobRegistry([reserve, ship]), Q('reserve'));
  const topic = 'arn:aws:sns:us-east-1:000000000000:order-placed';
  const wrap = (message: unknown, topicArn = topic, messageId = 'sns-1') =>
    JSON.stringify({ Type: 'Notification', TopicArn: topicArn, MessageId: messageId, Message: JSON.stringify(message) });

  it('a job named through a topic, a body with both job and event, an event without its id, an event as a fan-out child', () => {
    expect(decodeEnvelope(wrap({ v: 1, id: 'j', job: 'reserve', args: {} }), fallback, one)).toMatchObject({
      ok: false,
      reason: 'not-an-envelope',
      detail: expect.stringMatching(/carries no event/),
    });
    const both = { v: 1, id: 'e', job: 'reserve', event: 'order.placed', args: { orderId: 'o' } };
    expect(decodeEnvelope(JSON.stringify(both), fallback, one)).toMatchObject({ ok: false, reason: 'not-an-envelope' });
    const noId = { v: 1, event: 'order.placed', args: { orderId: 'o' } };
    expect(decodeEnvelope(JSON.stringify(noId), fallback, one)).toMatchObject({ ok: false, detail: expect.stringMatching(/needs its id/) });
    // Wrapped, SNS's message id is the event's: the same on every delivery of one publish.
    expect(decodeEnvelope(wrap(noId), fallback, one)).toMatchObject({ ok: true, envelope: { id: 'sns-1.reserve' } });
    const child = { v: 1, id: 'e', event: 'order.placed', parent: 'p', args: { orderId: 'o' } };
    expect(decodeEnvelope(JSON.stringify(child), fallback, one)).toMatchObject({ ok: false, reason: 'not-an-envelope' });
  });

  it('a topic of the same name in another account; an event on the queue of a job that does not take it', () => {
    const event = { v: 1, id: 'e', event: 'order.placed', args: { orderId: 'o' } };
    expect(decodeEnvelope(wrap(event, 'arn:aws:sns:us-east-1:999999999999:order-placed'), fallback, one)).toMatchObject({
      ok: false,
      reason: 'unknown-topic',
    });
    const onShipQueue = eventRoutingFor(new JobRegistry([reserve, ship]), Q('ship'));
    expect(decodeEnvelope(JSON.stringify(event), fallback, onShipQueue)).toMatchObject({
      ok: false,
      reason: 'unknown-job',
      detail: expect.stringMatching(/queue of a job that does not subscribe/),
    });
  });
});

describe('subscriptions (provisionEvents)', () => {
  it('an event on its own topic needs no filter; on a shared topic its name is added to the job’s filter', () => {
    expect(filterPolicyOf({ event: placed, filter: undefined })).toBeUndefined();
    const shared = defineEvent({ name: 'order.refunded', payload: z.object({}), topic: 'orders' });
    expect(JSON.parse(filterPolicyOf({ event: shared, filter: { region: ['eu'] } })!)).toEqual({
      'sqsjobs-event': ['order.refunded'],
      region: ['eu'],
    });
  });

  it('refuses two jobs that would share a queue before making anything', async () => {
    const untouchable = new Proxy({}, { get: () => () => Promise.reject(new Error('nothing may be made')) });
    const a = defineJob({ name: 'a.b', on: placed, handle: () => {} });
    const b = defineJob({ name: 'a-b', on: placed, handle: () => {} });
    await expect(provisionEvents(untouchable as never, untouchable as never, [a, b])).rejects.toThrow(
      /would share the subscriber queue "a-b"/,
    );
  });
});

describe('FIFO events', () => {
  const moved = defineEvent({ name: 'stock.moved', fifo: true, payload: z.object({ sku: z.string() }) });
  it('a FIFO topic ends in .fifo, as its subscribers’ queues do; the two must agree', () => {
    expect(moved).toMatchObject({ topic: 'stock-moved.fifo', fifo: true });
    expect(subscriberQueueNameFor('ledger.sync', true)).toBe('ledger-sync.fifo');
    expect(filterPolicyOf({ event: moved, filter: undefined })).toBeUndefined(); // its own topic
    expect(() => defineEvent({ name: 'a', fifo: true, payload: z.object({}), topic: 'a' })).toThrow(/event\.topic: must end in \.fifo/);
    expect(() => defineEvent({ name: 'a', payload: z.object({}), topic: 'a.fifo' })).toThrow(/event\.fifo: must be true/);
  });

  it('a FIFO publish needs its group, and uses the event id to deduplicate; a standard one takes no group', () => {
    expect(prepareEvent(moved, { sku: 's' }, { id: 'e-1', groupId: 's' }, 65_536)).toMatchObject({
      groupId: 's',
      deduplicationId: 'stock.moved:e-1', // the event's name too: events sharing a FIFO topic dedupe topic-wide
    });
    expect(prepareEvent(moved, { sku: 's' }, { id: 'x'.repeat(128), groupId: 's' }, 65_536).deduplicationId).toMatch(/^[\w-]{43}$/);
    expect(() => prepareEvent(moved, { sku: 's' }, {}, 65_536)).toThrow(/options\.groupId: is required/);
    expect(() => prepareEvent(placed, { orderId: 'o' }, { groupId: 'g' }, 65_536)).toThrow(/options\.groupId: is only for a FIFO event/);
  });
});

describe('prepareEvent (publish, before anything is sent)', () => {
  it('makes the event message and its attributes (for filter policies)', () => {
    const p = prepareEvent(placed, { orderId: 'o' }, { id: 'e-9', tenant: 'acme', attributes: { region: 'eu' } }, 65_536);
    expect(JSON.parse(p.body)).toMatchObject({ v: 1, id: 'e-9', event: 'order.placed', args: { orderId: 'o' }, tenant: 'acme' });
    expect(Object.fromEntries(Object.entries(p.attributes).map(([k, a]) => [k, a.StringValue]))).toEqual({
      'sqsjobs-event': 'order.placed',
      'sqsjobs-id': 'e-9',
      'sqsjobs-tenant': 'acme',
      region: 'eu',
    });
    expect(p.size).toBeGreaterThan(p.body.length);
  });

  it('carries the trace context it is given, and leaves it out (never the event) when the message would not fit with it', () => {
    const trace = { traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`, baggage: `k=${'v'.repeat(1_500)}` };
    expect(JSON.parse(prepareEvent(placed, { orderId: 'o' }, { trace }, 65_536).body).trace).toEqual(trace);
    const tight = prepareEvent(placed, { orderId: 'o'.repeat(500) }, { trace }, 1_024);
    expect(JSON.parse(tight.body).trace).toBeUndefined();
    expect(tight.size).toBeLessThanOrEqual(1_024);
  });

  it('refuses what SQS could not carry: too many attributes, reserved names, a payload over the limit', () => {
    const eight = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`a${i}`, 'x']));
    expect(() => parsePublishOptions(publishOptionsSchema, { attributes: eight }, placed)).toThrow(/options\.attributes: at most 7/);
    expect(() => parsePublishOptions(publishOptionsSchema, { attributes: { 'AWS.x': 'y' } }, placed)).toThrow(/reserved/);
    expect(() => prepareEvent(placed, { orderId: 'x'.repeat(2_000) }, {}, 1_024, 'payloads[3]')).toThrow(
      /event "order\.placed" payloads\[3\]: message body is 2\d{3} bytes/,
    );
  });
});
