import { DeleteMessageBatchCommand, ReceiveMessageCommand, SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { untilSteady } from '../lib/warm-up.js';
import type { Stack } from './stack.js';

/**
 * ElasticMQ's warm-up before anything is measured (bench/lib/warm-up.ts says why): rounds of
 * `round` messages, sent, received and deleted straight to ElasticMQ. The batch job always runs
 * first, so without it the JVM's compiling was charged to the batch job (ElasticMQ's CPU in its
 * run was 2-4x that of later ones).
 */
export function warmElasticMq(stack: Stack, round: number, minMs: number, maxMs: number): Promise<number[]> {
  return untilSteady(() => oneRound(stack, round), minMs, maxMs);
}

/** Send `n` messages, then receive and delete them with ten loops at once, asking what a worker asks for. */
async function oneRound(stack: Stack, n: number): Promise<void> {
  const queue = await stack.freshQueue('warm-up');
  const url = queue.directUrl;
  const sqs = stack.direct;
  const body = JSON.stringify({ warm: 'x'.repeat(100) });
  for (let sent = 0; sent < n; sent += 500) {
    await Promise.all(
      Array.from({ length: 50 }, (_, b) =>
        sqs.send(
          new SendMessageBatchCommand({
            QueueUrl: url,
            Entries: Array.from({ length: 10 }, (_, i) => ({
              Id: String(i),
              MessageBody: body,
              MessageAttributes: { n: { DataType: 'Number', StringValue: String(sent + b * 10 + i) } },
            })),
          }),
        ),
      ),
    );
  }
  let received = 0;
  const loop = async () => {
    while (received < n) {
      const r = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: url,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 1,
          MessageSystemAttributeNames: ['ApproximateReceiveCount', 'SentTimestamp'],
          MessageAttributeNames: ['All'],
        }),
      );
      const messages = r.Messages ?? [];
      if (messages.length === 0) return; // drained (another loop took the last ones)
      received += messages.length;
      await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: url,
          Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })),
        }),
      );
    }
  };
  await Promise.all(Array.from({ length: 10 }, loop));
}
