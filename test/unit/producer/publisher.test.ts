import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { defineEvent } from '../../../src/core/event.js';
import type { BatchFailure } from '../../../src/core/message.js';
import type { TopicMessage, TopicPort } from '../../../src/ports/topics.js';
import { createPublisher } from '../../../src/producer/create-publisher.js';

const placed = defineEvent({ name: 'order.placed', payload: z.object({ orderId: z.string() }) });
const moved = defineEvent({ name: 'stock.moved', fifo: true, payload: z.object({ orderId: z.string() }) });
afterEach(() => {
  vi.useRealTimers();
});

/** A topics port that records what it is asked and refuses the entries `refuse` names (pure logic: what SNS decides is tested on LocalStack and moto). */
class RecordingTopics implements TopicPort {
  readonly published: { topicArn: string; body: string }[] = [];
  readonly batches: { topicArn: string; ids: string[] }[] = [];
  lookups = 0;
  constructor(
    private readonly refuse: (body: string, attempt: number) => BatchFailure['kind'] | undefined = () => undefined,
    private readonly topics: Record<string, string> = {},
  ) {}
  readonly #attempts = new Map<string, number>();
  async publish(topicArn: string, message: TopicMessage) {
    this.published.push({ topicArn, body: message.body });
    return { messageId: `m-${this.published.length}` };
  }
  async publishBatch(topicArn: string, entries: readonly { id: string; message: TopicMessage }[]) {
    this.batches.push({ topicArn, ids: entries.map((e) => e.id) });
    const sent: { id: string; messageId: string }[] = [];
    const failed: BatchFailure[] = [];
    for (const e of entries) {
      const attempt = (this.#attempts.get(e.message.body) ?? 0) + 1;
      this.#attempts.set(e.message.body, attempt);
      const kind = this.refuse(e.message.body, attempt);
      if (kind === undefined) {
        this.published.push({ topicArn, body: e.message.body });
        sent.push({ id: e.id, messageId: `m-${this.published.length}` });
      } else failed.push({ id: e.id, code: kind === 'fatal' ? 'InvalidParameter' : 'Throttled', message: 'no', kind });
    }
    return { sent, failed };
  }
  async findTopic(name: string) {
    this.lookups++;
    return this.topics[name];
  }
}

const orderOf = (body: string) => (JSON.parse(body) as { args: { orderId: string } }).args.orderId;

describe('createPublisher: events without a queue', () => {
  it("makes the topic ARN from the account, in the region's partition", async () => {
    const topics = new RecordingTopics();
    const p = createPublisher({ topics, account: '123456789012', region: 'cn-north-1' }, {});
    await p.publish(placed, { orderId: 'a' });
    expect(topics.published[0]!.topicArn).toBe('arn:aws-cn:sns:cn-north-1:123456789012:order-placed');
    expect(topics.lookups).toBe(0);
  });

  it('without an account, looks the topic up by name once; a missing topic is a clear error', async () => {
    const arn = 'arn:aws:sns:eu-west-1:000000000000:order-placed';
    const topics = new RecordingTopics(undefined, { 'order-placed': arn });
    const p = createPublisher({ topics, region: 'eu-west-1' }, {});
    await p.publish(placed, { orderId: 'a' });
    await p.publishMany(placed, [{ orderId: 'b' }]);
    expect(topics.published.map((m) => m.topicArn)).toEqual([arn, arn]);
    expect(topics.lookups).toBe(1);
    const missing = defineEvent({ name: 'order.shipped', payload: z.object({}) });
    await expect(p.publish(missing, {})).rejects.toMatchObject({
      code: 'PUBLISH_FAILED',
      message: expect.stringContaining('no SNS topic named "order-shipped"'),
    });
  });

  it('publishMany: checks every payload first (naming which), then sends in batches of 10', async () => {
    const topics = new RecordingTopics();
    const p = createPublisher({ topics, account: '123456789012' }, {});
    await expect(p.publishMany(placed, [{ orderId: 'a' }, { orderId: 7 } as never])).rejects.toMatchObject({
      code: 'ARGS_INVALID',
      message: expect.stringContaining('payloads[1].orderId'),
    });
    expect(topics.batches).toHaveLength(0);
    const ids = Array.from({ length: 23 }, (_, i) => `e-${i}`);
    const out = await p.publishMany(
      placed,
      ids.map((id) => ({ orderId: id })),
      { ids },
    );
    expect(out.map((r) => r.eventId)).toEqual(ids);
    expect(topics.batches.map((b) => b.ids.length).sort((a, b) => a - b)).toEqual([3, 10, 10]);
    expect(topics.published.map((m) => orderOf(m.body)).sort()).toEqual([...ids].sort());
  });

  it('publishMany: sends again what SNS refused for its own reasons; names exactly what did not go', async () => {
    // o-1 is throttled once, then taken; o-2 is refused as the sender's fault (never retried).
    const topics = new RecordingTopics((body, attempt) => {
      const id = orderOf(body);
      if (id === 'o-1' && attempt === 1) return 'transient';
      if (id === 'o-2') return 'fatal';
      return undefined;
    });
    const p = createPublisher({ topics, account: '123456789012' }, {});
    vi.useFakeTimers();
    const pending = p.publishMany(placed, [{ orderId: 'o-0' }, { orderId: 'o-1' }, { orderId: 'o-2' }], { ids: ['a', 'b', 'c'] }).then(
      () => undefined,
      (e: unknown) => e,
    );
    await vi.advanceTimersByTimeAsync(1_000); // the retry's pause
    const error = await pending;
    expect(error).toMatchObject({
      code: 'PUBLISH_BATCH_PARTIAL',
      failed: [{ index: 2, eventId: 'c', code: 'InvalidParameter' }],
      sent: [
        { index: 0, eventId: 'a' },
        { index: 1, eventId: 'b' },
      ],
    });
    expect(topics.published.map((m) => orderOf(m.body)).sort()).toEqual(['o-0', 'o-1']);
  });

  it('publishMany of a FIFO event: batches in order, one at a time, no retry; a group stops at its first entry not published', async () => {
    // o-3 is throttled (SNS's fault: retried for a standard event, not here, where it would land after o-4).
    const topics = new RecordingTopics((body) => (orderOf(body) === 'o-3' ? 'transient' : undefined));
    const p = createPublisher({ topics, account: '123456789012' }, {});
    const payloads = Array.from({ length: 25 }, (_, i) => ({ orderId: `o-${i}` }));
    const groupIds = payloads.map((_, i) => (i === 24 ? 'other' : 'g'));
    const error = (await p.publishMany(moved, payloads, { groupIds }).then(
      () => undefined,
      (e: unknown) => e,
    )) as { failed: { index: number; code: string }[]; sent: { index: number }[] };
    expect(topics.batches.map((b) => b.ids)).toEqual([
      ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9'],
      ['24'], // group "other" goes on; group "g" stopped at o-3
    ]);
    expect(error.failed.map((f) => `${f.index}:${f.code}`)).toEqual([
      '3:Throttled',
      ...Array.from({ length: 14 }, (_, i) => `${i + 10}:NotSent`),
    ]);
    expect(error.sent.map((s) => s.index)).toEqual([0, 1, 2, 4, 5, 6, 7, 8, 9, 24]);
    await expect(p.publishMany(placed, [{ orderId: 'x' }], { groupIds: ['g'] })).rejects.toThrow(
      /options\.groupIds: is only for a FIFO event/,
    );
  });
});
