/**
 * ElasticMQ's warm-up before anything is measured. A fresh JVM's compiler (C2) keeps most of a
 * core busy for its first 40 s or so of load, and on two shared cores that CPU is taken from
 * whichever contender runs first (it made ElasticMQ's CPU in the first run 2-4x that of later
 * ones). Rounds of `round` messages, sent, received and deleted straight to ElasticMQ, for at
 * least `minMs` and until a round is no longer 10% faster than the one before, or `maxMs` has passed.
 */
export async function warmElasticMq(stack: Stack, round: number, minMs: number, maxMs: number): Promise<number[]> {
  const startedAt = performance.now();
  const rounds: number[] = [];
  while (performance.now() - startedAt < maxMs) {
    const t0 = performance.now();
    await oneRound(stack, round);
    rounds.push(performance.now() - t0);
    const [before, last] = rounds.slice(-2);
    if (performance.now() - startedAt >= minMs && last! > 0.9 * before!) break;
  }
  return rounds;
}

/** Send `n` messages, then receive and delete them with ten loops at once, asking what a worker asks for. */
import { DeleteMessageBatchCommand, ReceiveMessageCommand, SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import type { Stack } from './stack.js';

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
