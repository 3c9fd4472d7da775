import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ListMessageMoveTasksCommand,
  PurgeQueueCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  StartMessageMoveTaskCommand,
  ChangeMessageVisibilityBatchCommand,
  type Message,
  type MessageAttributeValue,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { batchFailures } from '../adapters/sqs-queue.js';
import { isFifoQueue } from '../config.js';
import { sleep } from '../sleep.js';
import { inBatches } from '../sqs-batch.js';
import { ATTR_JOB, ATTR_JOB_ID } from '../envelope.js';
import { ATTR_DLQ_AT, ATTR_DLQ_ERROR, ATTR_DLQ_REASON, ATTR_DLQ_RECEIVE_COUNT, ATTR_DLQ_SOURCE } from '../dead-letter.js';

/** A dead-lettered message as an operator sees it. */
export interface DeadLetter {
  readonly messageId: string;
  readonly jobName: string | undefined;
  readonly jobId: string | undefined;
  readonly tenant: string | undefined;
  /** The attempt it failed on (ours), else SQS's receive count from before it was moved. */
  readonly receiveCount: number | undefined;
  /** Our reason code; `redrive` when SQS moved it after maxReceiveCount. */
  readonly reason: string;
  readonly error: string | undefined;
  readonly deadLetteredAt: string | undefined;
  readonly sourceQueueUrl: string | undefined;
}

const HOLD_SECONDS = 60;

function attr(m: Message, name: string): string | undefined {
  return m.MessageAttributes?.[name]?.StringValue;
}

/** What a DLQ message says about itself: our attributes first, the envelope second. */
export function describeDeadLetter(m: Message): DeadLetter {
  let body: { id?: unknown; job?: unknown; tenant?: unknown } = {};
  try {
    const parsed: unknown = JSON.parse(m.Body ?? '');
    if (typeof parsed === 'object' && parsed !== null) body = parsed as typeof body;
  } catch {
    // poison: the attributes are all there is
  }
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const count = attr(m, ATTR_DLQ_RECEIVE_COUNT);
  return {
    messageId: m.MessageId ?? '',
    jobName: attr(m, ATTR_JOB) ?? str(body.job),
    jobId: attr(m, ATTR_JOB_ID) ?? str(body.id),
    tenant: str(body.tenant),
    receiveCount: count !== undefined ? Number(count) : undefined,
    reason: attr(m, ATTR_DLQ_REASON) ?? 'redrive',
    error: attr(m, ATTR_DLQ_ERROR),
    deadLetteredAt: attr(m, ATTR_DLQ_AT),
    sourceQueueUrl: attr(m, ATTR_DLQ_SOURCE),
  };
}

async function receive(sqs: SQSClient, queueUrl: string, max: number): Promise<Message[]> {
  const out = await sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: queueUrl,
      MaxNumberOfMessages: Math.min(10, max),
      WaitTimeSeconds: 1,
      VisibilityTimeout: HOLD_SECONDS,
      MessageAttributeNames: ['All'],
      MessageSystemAttributeNames: ['All'],
    }),
  );
  return out.Messages ?? [];
}

/** Make held messages visible again at once. */
async function makeVisible(sqs: SQSClient, queueUrl: string, messages: readonly Message[]): Promise<void> {
  const failed = await inBatches(messages, async (batch) => {
    const out = await sqs.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: queueUrl,
        Entries: batch.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0 })),
      }),
    );
    return batchFailures(out.Failed);
  });
  // Not fatal: a message not made visible here comes back when its hold ends.
  if (failed.length > 0)
    throw new Error(`${failed.length} message(s) stay hidden until their ${HOLD_SECONDS} s hold ends: ${failed[0]!.failure.code}`);
}

/**
 * Look at up to `limit` dead letters without consuming them: receive (held for a minute so none is
 * seen twice), read, then make every one visible again.
 */
export async function listDeadLetters(sqs: SQSClient, dlqUrl: string, limit = 100): Promise<DeadLetter[]> {
  const held: Message[] = [];
  try {
    while (held.length < limit) {
      const batch = await receive(sqs, dlqUrl, limit - held.length);
      if (batch.length === 0) break;
      held.push(...batch);
    }
    return held.map(describeDeadLetter);
  } finally {
    await makeVisible(sqs, dlqUrl, held);
  }
}

export interface ReplayOptions {
  readonly dlqUrl: string;
  /** Where a message goes when it does not name its source (SQS redrive does not). */
  readonly sourceQueueUrl: string | undefined;
  readonly job?: string | undefined;
  readonly id?: string | undefined;
  readonly limit?: number | undefined;
  readonly dryRun?: boolean | undefined;
  /** `client`: always send, then delete, here, even where the server has message move tasks. Default `auto`. */
  readonly mode?: 'auto' | 'client' | undefined;
  /** Stop between batches (e.g. on Ctrl-C): everything moved so far is moved, the rest stays. */
  readonly signal?: AbortSignal | undefined;
  readonly onMoved?: (letter: DeadLetter, to: string) => void;
}

export interface ReplayResult {
  readonly moved: number;
  /** Matched but left in the DLQ: dry run, no known source, or a send SQS refused. */
  readonly skipped: { readonly letter: DeadLetter; readonly why: string }[];
  readonly via: 'client' | 'move-task';
}

const OUR_ATTRIBUTES = new Set([ATTR_DLQ_REASON, ATTR_DLQ_ERROR, ATTR_DLQ_SOURCE, ATTR_DLQ_RECEIVE_COUNT, ATTR_DLQ_AT]);

function replayAttributes(m: Message): Record<string, MessageAttributeValue> {
  return Object.fromEntries(Object.entries(m.MessageAttributes ?? {}).filter(([name]) => !OUR_ATTRIBUTES.has(name)));
}

/**
 * Move chosen dead letters back to their source queue: send, then delete from the DLQ. A crash
 * between the two may leave a copy in both (the job id is kept, so the worker's dedupe still
 * applies); it never loses one. Without filters or a limit, an SQS message move task does the
 * work where the server has them; otherwise (moto has none) it is done here, 10 at a time.
 */
export async function replayDeadLetters(sqs: SQSClient, o: ReplayOptions): Promise<ReplayResult> {
  const wholeQueue = o.job === undefined && o.id === undefined && o.limit === undefined && !o.dryRun;
  if (wholeQueue && o.sourceQueueUrl !== undefined && o.mode !== 'client') {
    const movedByTask = await tryMoveTask(sqs, o.dlqUrl, o.sourceQueueUrl);
    if (movedByTask !== undefined) return { moved: movedByTask, skipped: [], via: 'move-task' };
  }
  const limit = o.limit ?? Number.POSITIVE_INFINITY;
  const passedOver: Message[] = [];
  const skipped: { letter: DeadLetter; why: string }[] = [];
  let moved = 0;
  let matched = 0;
  try {
    while (matched < limit && !o.signal?.aborted) {
      const batch = await receive(sqs, o.dlqUrl, 10);
      if (batch.length === 0) break;
      const toMove: { m: Message; letter: DeadLetter; to: string }[] = [];
      for (const m of batch) {
        const letter = describeDeadLetter(m);
        const chosen =
          (o.job === undefined || letter.jobName === o.job) && (o.id === undefined || letter.jobId === o.id) && matched < limit;
        if (!chosen) {
          passedOver.push(m);
          continue;
        }
        matched++;
        const to = letter.sourceQueueUrl ?? o.sourceQueueUrl;
        if (o.dryRun || to === undefined) {
          skipped.push({ letter, why: o.dryRun ? 'dry run' : 'the message does not name its source queue: pass --queue' });
          passedOver.push(m);
        } else toMove.push({ m, letter, to });
      }
      moved += await moveBatch(sqs, o, toMove, skipped, passedOver);
    }
  } finally {
    await makeVisible(sqs, o.dlqUrl, passedOver);
  }
  return { moved, skipped, via: 'client' };
}

async function moveBatch(
  sqs: SQSClient,
  o: ReplayOptions,
  items: { m: Message; letter: DeadLetter; to: string }[],
  skipped: { letter: DeadLetter; why: string }[],
  passedOver: Message[],
): Promise<number> {
  const sent: typeof items = [];
  const byTarget = new Map<string, typeof items>();
  for (const item of items) byTarget.set(item.to, [...(byTarget.get(item.to) ?? []), item]);
  for (const [to, group] of byTarget) {
    const fifo = isFifoQueue(to);
    const failed = await inBatches(group, async (batch) => {
      const out = await sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: to,
          Entries: batch.map(({ m }, i) => ({
            Id: String(i),
            MessageBody: m.Body ?? '',
            MessageAttributes: replayAttributes(m),
            ...(fifo
              ? { MessageGroupId: m.Attributes?.MessageGroupId ?? m.MessageId, MessageDeduplicationId: `replay-${m.MessageId}` }
              : {}),
          })),
        }),
      );
      return batchFailures(out.Failed);
    });
    const refused = new Map(failed.map((f) => [f.item, f.failure]));
    for (const item of group) {
      const f = refused.get(item);
      if (f === undefined) sent.push(item);
      else {
        skipped.push({ letter: item.letter, why: `SQS refused the send: ${f.code} ${f.message}`.trim() });
        passedOver.push(item.m);
      }
    }
  }
  if (sent.length === 0) return 0;
  const undeleted = await inBatches(sent, async (batch) => {
    const out = await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: o.dlqUrl,
        Entries: batch.map(({ m }, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
      }),
    );
    return batchFailures(out.Failed);
  });
  // Sent but still in the DLQ: a later replay would send it again; the job id keeps it from running twice.
  for (const { item, failure } of undeleted)
    skipped.push({ letter: item.letter, why: `moved, but the DLQ copy could not be deleted: ${failure.code}` });
  for (const item of sent) o.onMoved?.(item.letter, item.to);
  return sent.length;
}

/** Run an SQS message move task to the end: how many it moved, or undefined when the server has none (moto). */
async function tryMoveTask(sqs: SQSClient, dlqUrl: string, sourceQueueUrl: string): Promise<number | undefined> {
  const arnOf = async (url: string) =>
    (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }))).Attributes?.QueueArn;
  const [sourceArn, destinationArn] = await Promise.all([arnOf(dlqUrl), arnOf(sourceQueueUrl)]);
  try {
    await sqs.send(new StartMessageMoveTaskCommand({ SourceArn: sourceArn, DestinationArn: destinationArn }));
  } catch {
    return undefined;
  }
  for (;;) {
    const tasks = await sqs.send(new ListMessageMoveTasksCommand({ SourceArn: sourceArn, MaxResults: 1 }));
    const status = tasks.Results?.[0]?.Status;
    if (status === 'COMPLETED') return tasks.Results?.[0]?.ApproximateNumberOfMessagesMoved ?? 0;
    if (status === 'FAILED' || status === 'CANCELLED')
      throw new Error(`message move task ${status}: ${tasks.Results?.[0]?.FailureReason ?? ''}`);
    await sleep(500);
  }
}

/** Delete every message in the DLQ (SQS allows one purge per queue per 60 s). */
export async function purgeDeadLetters(sqs: SQSClient, dlqUrl: string): Promise<void> {
  await sqs.send(new PurgeQueueCommand({ QueueUrl: dlqUrl }));
}
