/**
 * 2. The failure path: every job throws. The records are real messages, sent to the queue and
 * received from it here (on the bench's own, uncounted client), so that their receipt handles are
 * good: sqs-jobs settles a failed record by setting its visibility to its backoff
 * (ChangeMessageVisibilityBatch, ten records a call) and reports it failed; Powertools only reports
 * it failed (the mapping leaves it to come back after the queue's visibility timeout), after deleting
 * its idempotency record. Each side gets its own messages; the calls each handler's clients made
 * are counted per record (stack.ts). Both must answer every record failed.
 */
import { type Message, ReceiveMessageCommand, SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import type { SqsEvent } from '../../src/lambda/event.js';
import { eventOf, jobMessage, lambdaContext } from './events.js';
import type { Stack } from './stack.js';

export interface SideFailures {
  readonly records: number;
  /** Records the handler answered failed (all expected). */
  readonly answeredFailed: number;
  /** Calls per record, by operation. */
  readonly sqs: Record<string, number>;
  readonly dynamo: Record<string, number>;
}

/** `count` messages of failing jobs sent to the queue, then received with every attribute (visibility 300 s: nothing comes back meanwhile). */
async function receiveFailing(stack: Stack, count: number): Promise<Message[]> {
  for (let i = 0; i < count; i += 10) {
    const entries = Array.from({ length: Math.min(10, count - i) }, (_, k) => {
      const { body, attributes } = jobMessage('fails', i + k);
      return { Id: String(k), MessageBody: body, MessageAttributes: attributes };
    });
    const out = await stack.plain.send(new SendMessageBatchCommand({ QueueUrl: stack.queueUrl, Entries: entries }));
    if ((out.Failed ?? []).length > 0) throw new Error(`sending the failure path's messages: ${JSON.stringify(out.Failed)}`);
  }
  const got: Message[] = [];
  for (let tries = 0; got.length < count && tries < 5 * count; tries++) {
    const out = await stack.plain.send(
      new ReceiveMessageCommand({
        QueueUrl: stack.queueUrl,
        MaxNumberOfMessages: Math.min(10, count - got.length),
        WaitTimeSeconds: 1,
        VisibilityTimeout: 300,
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
    );
    got.push(...(out.Messages ?? []));
  }
  if (got.length < count) throw new Error(`received ${got.length} of the failure path's ${count} messages`);
  return got;
}

export async function measureFailures(
  stack: Stack,
  scale: { invocations: number; records: number },
): Promise<{ sqsJobs: SideFailures; powertools: SideFailures }> {
  const perSide = scale.invocations * scale.records;
  const messages = await receiveFailing(stack, 2 * perSide);
  const eventsOf = (from: number): SqsEvent[] =>
    Array.from({ length: scale.invocations }, (_, i) =>
      eventOf(stack.queueUrl, messages.slice(from + i * scale.records, from + (i + 1) * scale.records)),
    );
  const run = async (side: 'sqsJobs' | 'powertools', events: SqsEvent[]): Promise<SideFailures> => {
    const calls = stack.calls[side];
    calls.sqs.reset();
    calls.dynamo.reset();
    let answeredFailed = 0;
    for (const event of events) answeredFailed += (await stack[side](event, lambdaContext())).batchItemFailures.length;
    const per = (t: typeof calls.sqs) => Object.fromEntries(Object.entries(t.snapshot()).map(([op, n]) => [op, n / perSide]));
    return { records: perSide, answeredFailed, sqs: per(calls.sqs), dynamo: per(calls.dynamo) };
  };
  const sqsJobs = await run('sqsJobs', eventsOf(0));
  const powertools = await run('powertools', eventsOf(perSide));
  return { sqsJobs, powertools };
}
