/**
 * Candidate (c), a prototype in bench/ only: a sorter process between producers and workers, after
 * the Builders' Library "spillover queue". It receives from the intake queue; each key has a token
 * bucket (perKeyPerSecond, burst); a message whose key has a token goes to the main queue, any
 * other to the spillover queue (body and attributes unchanged), then it is deleted from intake.
 * Send-then-delete: a crash in between duplicates, never loses (the dedupe lock absorbs it).
 * Costs 3 extra calls per 10 messages (receive, send batch, delete batch), and one hop of latency.
 * IPC: {type:'ready'}; SIGTERM stops it.
 */
import { DeleteMessageBatchCommand, ReceiveMessageCommand, SendMessageBatchCommand, SQSClient, type Message } from '@aws-sdk/client-sqs';
import type { SorterSettings } from './modes.js';

export interface SorterSpec {
  readonly endpoint: string;
  readonly urls: Record<string, string>;
  readonly settings: SorterSettings;
}

const spec = JSON.parse(process.argv[2]!) as SorterSpec;
const s = spec.settings;
const sqs = new SQSClient({ endpoint: spec.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
const stop = new AbortController();
process.on('SIGTERM', () => stop.abort());

const buckets = new Map<string, { tokens: number; at: number }>();
function admit(key: string, now: number): boolean {
  const b = buckets.get(key) ?? { tokens: s.burst, at: now };
  b.tokens = Math.min(s.burst, b.tokens + ((now - b.at) / 1000) * s.perKeyPerSecond);
  b.at = now;
  buckets.set(key, b);
  if (b.tokens < 1) return false;
  b.tokens -= 1;
  return true;
}

function keyOf(m: Message): string {
  const group = m.Attributes?.MessageGroupId;
  if (group !== undefined) return group;
  try {
    return (JSON.parse(m.Body ?? '{}') as { tenant?: string }).tenant ?? '-';
  } catch {
    return '-';
  }
}

async function forward(queueUrl: string, messages: Message[]): Promise<void> {
  if (messages.length === 0) return;
  const out = await sqs.send(
    new SendMessageBatchCommand({
      QueueUrl: queueUrl,
      Entries: messages.map((m, i) => ({
        Id: String(i),
        MessageBody: m.Body!,
        MessageAttributes: m.MessageAttributes,
        MessageGroupId: m.Attributes?.MessageGroupId,
      })),
    }),
  );
  if ((out.Failed ?? []).length > 0) throw new Error(`${out.Failed!.length} messages not forwarded`);
}

async function loop(): Promise<void> {
  while (!stop.signal.aborted) {
    let messages: Message[];
    try {
      const out = await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: spec.urls[s.intake]!,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 20,
          MessageAttributeNames: ['All'],
          MessageSystemAttributeNames: ['MessageGroupId'],
        }),
        { abortSignal: stop.signal },
      );
      messages = out.Messages ?? [];
    } catch {
      continue; // aborted, or a passing fault: the loop condition decides
    }
    if (messages.length === 0) continue;
    const now = Date.now();
    const main: Message[] = [];
    const spill: Message[] = [];
    for (const m of messages) (admit(keyOf(m), now) ? main : spill).push(m);
    try {
      await Promise.all([forward(spec.urls[s.main]!, main), forward(spec.urls[s.spill]!, spill)]);
      await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: spec.urls[s.intake]!,
          Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })),
        }),
      );
    } catch {
      // not deleted: intake delivers them again after its visibility timeout
    }
  }
}

process.send?.({ type: 'ready' });
await Promise.all(Array.from({ length: s.loops }, loop));
sqs.destroy();
process.exit(0);
