import { describe, expect, it } from 'vitest';
import { ATTR_DLQ_AT, ATTR_DLQ_REASON, ATTR_DLQ_SOURCE, ATTR_REPLAY } from '../../../src/core/dead-letter.js';
import { ATTR_PRIOR_RECEIVES, ATTR_UNFINISHED_RUNS } from '../../../src/core/delivery.js';
import { ATTR_JOB, ATTR_JOB_ID } from '../../../src/core/envelope.js';
import type { OutgoingMessage } from '../../../src/core/message.js';
import { listDeadLetters } from '../../../src/ops/dlq-scan.js';
import { replayDeadLetters } from '../../../src/ops/replay.js';
import type { QueuePort } from '../../../src/ports/queue.js';
import { MemoryQueue } from '../../../src/testing/memory-queue.js';

/*
 * The replay's rules on the in-memory queue (which refuses stale receipt handles and counts
 * receives as SQS does; test/contracts/queue-port.test.ts holds it to that). What SQS itself does
 * with a replay is tested on LocalStack and moto (test/integration/ops.test.ts, dlq-replay.test.ts).
 */

const text = (v: string) => ({ DataType: 'String', StringValue: v });

function setup() {
  const memory = new MemoryQueue();
  const dlq = memory.create('jobs-dlq');
  const source = memory.create('jobs', { deadLetterQueueUrl: dlq, maxReceiveCount: 3 });
  const deadLetter = (id: string, job = 'refund', extra: Record<string, { DataType: string; StringValue: string }> = {}) =>
    memory.send(dlq, {
      body: JSON.stringify({ v: 1, id, job, args: {}, enqueuedAt: '2026-11-24T00:00:00.000Z' }),
      attributes: {
        [ATTR_JOB]: text(job),
        [ATTR_JOB_ID]: text(id),
        [ATTR_DLQ_REASON]: text('retries-exhausted'),
        [ATTR_DLQ_SOURCE]: text(source),
        [ATTR_DLQ_AT]: text('2026-11-24T00:00:00.000Z'),
        [ATTR_PRIOR_RECEIVES]: { DataType: 'Number', StringValue: '4' },
        [ATTR_UNFINISHED_RUNS]: { DataType: 'String', StringValue: '4 tok-4' },
        ...extra,
      },
    });
  const ids = (url: string) =>
    memory
      .peek(url)
      .map((m) => JSON.parse(m.body).id as string)
      .sort();
  return { memory, dlq, source, deadLetter, ids };
}

describe('replayDeadLetters on the in-memory queue', () => {
  it('moves every dead letter once, as a new message without its DLQ and re-send notes, marked with the replay', async () => {
    const { memory, dlq, source, deadLetter, ids } = setup();
    for (let n = 0; n < 25; n++) await deadLetter(`r-${n}`);
    const result = await replayDeadLetters(memory, { dlqUrl: dlq, sourceQueueUrl: undefined });
    expect(result.moved).toBe(25);
    expect(ids(dlq)).toEqual([]);
    expect(ids(source)).toHaveLength(25);
    for (const m of memory.peek(source)) {
      expect(Object.keys(m.attributes).sort()).toEqual([ATTR_JOB_ID, ATTR_JOB, ATTR_REPLAY].sort());
      expect(m.attributes[ATTR_REPLAY]?.StringValue).toBe(result.replayId);
      expect(m.receiveCount).toBe(0);
    }
  });

  it('chooses by job and id, stops at the limit, and leaves the rest visible in the DLQ', async () => {
    const { memory, dlq, source, deadLetter, ids } = setup();
    for (let n = 0; n < 4; n++) await deadLetter(`refund-${n}`);
    for (let n = 0; n < 3; n++) await deadLetter(`email-${n}`, 'email');
    const one = await replayDeadLetters(memory, { dlqUrl: dlq, sourceQueueUrl: undefined, filter: { id: 'email-1' } });
    expect(one).toMatchObject({ moved: 1, passedOver: { notChosen: 6 } });
    const two = await replayDeadLetters(memory, { dlqUrl: dlq, sourceQueueUrl: undefined, filter: { job: 'refund' }, limit: 2 });
    expect(two.moved).toBe(2);
    const moved = ids(source);
    expect(moved).toHaveLength(3);
    expect(moved.filter((i) => i.startsWith('refund-'))).toHaveLength(2);
    expect(moved).toContain('email-1');
    expect(ids(dlq)).toHaveLength(4);
    expect(memory.peek(dlq).every((m) => m.visibleInMs === 0)).toBe(true); // made visible again at the end
  });

  it('a dry run moves nothing, and a message naming no source is left unless --queue names one', async () => {
    const { memory, dlq, source, ids } = setup();
    await memory.send(dlq, { body: '{"v":1,"id":"orphan","job":"refund","args":{}}', attributes: { [ATTR_JOB]: text('refund') } });
    const dry = await replayDeadLetters(memory, { dlqUrl: dlq, sourceQueueUrl: source, dryRun: true });
    expect(dry).toMatchObject({ moved: 0, skipped: [{ why: 'dry run' }] });
    const blind = await replayDeadLetters(memory, { dlqUrl: dlq, sourceQueueUrl: undefined });
    expect(blind.skipped[0]?.why).toMatch(/does not name its source queue/);
    expect((await replayDeadLetters(memory, { dlqUrl: dlq, sourceQueueUrl: source })).moved).toBe(1);
    expect(ids(source)).toEqual(['orphan']);
  });

  it('does not loop: a replayed job that fails straight back into the DLQ is left there, and the replay ends', async () => {
    const { memory, dlq, source, deadLetter, ids } = setup();
    for (let n = 0; n < 12; n++) await deadLetter(`loop-${n}`);
    // Every job sent back fails at once and a worker dead-letters it again, keeping the replay's mark.
    const failing: QueuePort = Object.assign(Object.create(memory) as MemoryQueue, {
      receive: memory.receive.bind(memory),
      changeVisibilityBatch: memory.changeVisibilityBatch.bind(memory),
      deleteBatch: memory.deleteBatch.bind(memory),
      sendBatch: async (url: string, entries: readonly { id: string; message: OutgoingMessage }[]) => {
        const out = await memory.sendBatch(url, entries);
        for (const e of entries)
          await memory.send(dlq, {
            ...e.message,
            attributes: { ...e.message.attributes, [ATTR_DLQ_AT]: text('2026-11-24T00:00:00.000Z') },
          });
        return out;
      },
    });
    const result = await replayDeadLetters(failing, { dlqUrl: dlq, sourceQueueUrl: undefined });
    expect(result.moved).toBe(12); // each once
    expect(result.passedOver.movedByThisReplay).toBe(12);
    expect(ids(dlq)).toHaveLength(12);
    expect(ids(source)).toHaveLength(12);
  });

  it('leaves a dead letter written after it began (a worker dead-lettering meanwhile)', async () => {
    const { memory, dlq, deadLetter } = setup();
    await deadLetter('old');
    await deadLetter('new', 'refund', { [ATTR_DLQ_AT]: text(new Date(Date.now() + 60_000).toISOString()) });
    const result = await replayDeadLetters(memory, { dlqUrl: dlq, sourceQueueUrl: undefined });
    expect(result).toMatchObject({ moved: 1, passedOver: { arrivedAfterStart: 1 } });
    expect((await listDeadLetters(memory, dlq)).map((l) => l.jobId)).toEqual(['new']);
  });

  it('stops between batches when its signal aborts: what moved is moved, the rest stays', async () => {
    const { memory, dlq, source, deadLetter, ids } = setup();
    for (let n = 0; n < 30; n++) await deadLetter(`s-${n}`);
    const stop = new AbortController();
    const result = await replayDeadLetters(memory, {
      dlqUrl: dlq,
      sourceQueueUrl: undefined,
      signal: stop.signal,
      onMoved: () => stop.abort(),
    });
    expect(result.moved).toBe(10); // the batch in hand
    expect(ids(source)).toHaveLength(10);
    expect(ids(dlq)).toHaveLength(20);
  });
});
