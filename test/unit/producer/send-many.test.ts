import { SendMessageBatchCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SqsQueuePort } from '../../../src/adapters/sqs-queue.js';
import { EnqueueBatchError } from '../../../src/core/errors.js';
import { defineJob } from '../../../src/core/job.js';
import { createProducer } from '../../../src/producer/producer.js';
import { chunkMessages } from '../../../src/producer/send-many.js';

/**
 * How enqueueMany treats a SendMessageBatch answer with failed entries. What SQS refuses is SQS's
 * business (the integration tests ask moto); this is our handling of the answer: transient
 * failures (SenderFault false) are sent again, sender faults are reported, nothing is dropped.
 */
function scriptedClient(answer: (ids: string[], call: number) => { ok: string[]; failed: { id: string; senderFault: boolean }[] }) {
  const calls: string[][] = [];
  const client = {
    async send(command: unknown) {
      if (!(command instanceof SendMessageBatchCommand)) throw new Error('unexpected command');
      const ids = (command.input.Entries ?? []).map((e) => e.Id!);
      calls.push(ids);
      const { ok, failed } = answer(ids, calls.length);
      return {
        Successful: ok.map((id) => ({ Id: id, MessageId: `m-${id}` })),
        Failed: failed.map((f) => ({
          Id: f.id,
          SenderFault: f.senderFault,
          Code: f.senderFault ? 'InvalidParameterValue' : 'InternalError',
          Message: 'no',
        })),
      };
    },
    destroy() {},
  } as unknown as SQSClient;
  return { client, calls };
}

const note = defineJob({ name: 'note', args: z.object({ text: z.string() }), handle: () => {} });
const queueUrl = 'http://127.0.0.1:4566/123456789012/q';

describe('enqueueMany batch answers', () => {
  it('sends transient failures again and succeeds', async () => {
    const { client, calls } = scriptedClient((ids, call) =>
      call === 1 ? { ok: ids.filter((id) => id !== '3'), failed: [{ id: '3', senderFault: false }] } : { ok: ids, failed: [] },
    );
    const producer = createProducer({ queueUrl, queue: new SqsQueuePort(client) }, {});
    const results = await producer.enqueueMany(
      note,
      Array.from({ length: 5 }, (_, i) => ({ text: String(i) })),
    );
    expect(results.map((r) => r.messageId)).toEqual(['m-0', 'm-1', 'm-2', 'm-3', 'm-4']);
    expect(calls).toEqual([['0', '1', '2', '3', '4'], ['3']]);
  });

  it('reports sender faults and exhausted retries by index, with what was sent', async () => {
    const { client } = scriptedClient((ids) => ({
      ok: ids.filter((id) => id !== '1' && id !== '11'),
      failed: ids.filter((id) => id === '1' || id === '11').map((id) => ({ id, senderFault: id === '1' })),
    }));
    const producer = createProducer({ queueUrl, queue: new SqsQueuePort(client) }, {});
    const error = (await producer
      .enqueueMany(
        note,
        Array.from({ length: 12 }, (_, i) => ({ text: String(i) })),
      )
      .catch((e: unknown) => e)) as EnqueueBatchError;
    expect(error).toBeInstanceOf(EnqueueBatchError);
    expect(error.failed.map((f) => [f.index, f.code])).toEqual([
      [1, 'InvalidParameterValue'],
      [11, 'InternalError'],
    ]);
    expect(error.sent.map((s) => s.index)).toEqual([0, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(error.message).toMatch(/^2 of 12 jobs were not enqueued/);
  });

  it('reports an entry the answer names neither way as not sent (never assumes it went)', async () => {
    const { client } = scriptedClient((ids) => ({ ok: ids.filter((id) => id !== '2'), failed: [] }));
    const producer = createProducer({ queueUrl, queue: new SqsQueuePort(client) }, {});
    const error = (await producer
      .enqueueMany(
        note,
        Array.from({ length: 4 }, (_, i) => ({ text: String(i) })),
      )
      .catch((e: unknown) => e)) as EnqueueBatchError;
    expect(error).toBeInstanceOf(EnqueueBatchError);
    expect(error.failed.map((f) => [f.index, f.code])).toEqual([[2, 'NoAnswer']]);
  });
});

describe('chunkMessages', () => {
  it('splits by 10 entries', () => {
    expect(
      chunkMessages(
        Array.from({ length: 25 }, () => ({ size: 1 })),
        1000,
      ).map((c) => c.length),
    ).toEqual([10, 10, 5]);
  });

  it('splits by total bytes, keeping an oversized single entry alone', () => {
    expect(chunkMessages([{ size: 60 }, { size: 50 }, { size: 200 }, { size: 10 }], 100)).toEqual([[0], [1], [2], [3]]);
    expect(chunkMessages([{ size: 40 }, { size: 50 }, { size: 20 }], 100)).toEqual([[0, 1], [2]]);
  });
});
