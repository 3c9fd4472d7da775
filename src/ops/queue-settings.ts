import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  SetQueueAttributesCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';

/** The settings createQueues manages on a queue; the redrive policy's two halves apart. */
export interface QueueSettings {
  readonly visibilityTimeout?: number | undefined;
  readonly messageRetentionSeconds?: number | undefined;
  readonly maximumMessageSize?: number | undefined;
  readonly maxReceiveCount?: number | undefined;
  readonly deadLetterTargetArn?: string | undefined;
}

const LABELS = {
  visibilityTimeout: 'visibility',
  messageRetentionSeconds: 'retention',
  maximumMessageSize: 'max message size',
  maxReceiveCount: 'max receive count',
  deadLetterTargetArn: 'dead-letter queue',
} as const satisfies Record<keyof QueueSettings, string>;

/** One queue created, or one of its settings changed (`from` is absent when it had none). */
export type QueueChange =
  | { readonly queue: string; readonly setting: 'created' }
  | {
      readonly queue: string;
      readonly setting: (typeof LABELS)[keyof QueueSettings];
      readonly from?: number | string;
      readonly to: number | string;
    };

/** A RedrivePolicy attribute's value, or undefined when it names no DLQ. */
export function parseRedrivePolicy(raw: string | undefined): { deadLetterTargetArn: string; maxReceiveCount: number } | undefined {
  if (raw === undefined || raw === '') return undefined;
  const policy = JSON.parse(raw) as { deadLetterTargetArn?: string; maxReceiveCount?: string | number };
  if (policy.deadLetterTargetArn === undefined) return undefined;
  return { deadLetterTargetArn: policy.deadLetterTargetArn, maxReceiveCount: Number(policy.maxReceiveCount) };
}

/**
 * Make the queue if it is missing, with `defaults` under `wanted`; on an existing queue set only
 * the settings in `wanted` that differ, leaving the rest as they are. A redrive policy is set
 * whole, so a queue given a DLQ but no count keeps its own count (`defaults`' when it had none).
 * Appends what it did to `changes`; answers the URL and the settings the queue now has.
 */
export async function ensureQueue(
  sqs: SQSClient,
  name: string,
  fifo: boolean,
  wanted: QueueSettings,
  defaults: QueueSettings,
  changes: QueueChange[],
): Promise<{ url: string; settings: QueueSettings }> {
  const existing = await findQueueUrl(sqs, name);
  if (existing === undefined) {
    const created = await sqs.send(new CreateQueueCommand({ QueueName: name, ...(fifo ? { Attributes: { FifoQueue: 'true' } } : {}) }));
    const url = created.QueueUrl ?? (await findQueueUrl(sqs, name));
    if (url === undefined) throw new Error(`SQS returned no URL for queue ${name}`);
    const settings = { ...defaults, ...defined(wanted) };
    await setSettings(sqs, url, settings);
    changes.push({ queue: name, setting: 'created' });
    return { url, settings };
  }
  const current = await readSettings(sqs, existing);
  const target: QueueSettings = {
    ...defined(wanted),
    ...(wanted.deadLetterTargetArn !== undefined && wanted.maxReceiveCount === undefined
      ? { maxReceiveCount: current.maxReceiveCount ?? defaults.maxReceiveCount }
      : {}),
  };
  const changed = (Object.keys(target) as (keyof QueueSettings)[]).filter((key) => target[key] !== current[key]);
  if (changed.length === 0) return { url: existing, settings: current };
  const redrive = changed.includes('maxReceiveCount') || changed.includes('deadLetterTargetArn');
  const update = Object.fromEntries(changed.map((key) => [key, target[key]])) as QueueSettings;
  await setSettings(
    sqs,
    existing,
    redrive ? { ...update, maxReceiveCount: target.maxReceiveCount, deadLetterTargetArn: target.deadLetterTargetArn } : update,
  );
  for (const key of changed) {
    const from = current[key];
    changes.push({ queue: name, setting: LABELS[key], ...(from === undefined ? {} : { from }), to: target[key]! });
  }
  return { url: existing, settings: { ...current, ...target } };
}

async function findQueueUrl(sqs: SQSClient, name: string): Promise<string | undefined> {
  try {
    return (await sqs.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl;
  } catch (error) {
    if ((error as Error).name === 'QueueDoesNotExist' || (error as Error).name === 'AWS.SimpleQueueService.NonExistentQueue')
      return undefined;
    throw error;
  }
}

async function readSettings(sqs: SQSClient, url: string): Promise<QueueSettings> {
  const a = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['All'] }))).Attributes ?? {};
  const num = (v: string | undefined) => (v === undefined || v === '' ? undefined : Number(v));
  const policy = parseRedrivePolicy(a.RedrivePolicy);
  return {
    visibilityTimeout: num(a.VisibilityTimeout),
    messageRetentionSeconds: num(a.MessageRetentionPeriod),
    maximumMessageSize: num(a.MaximumMessageSize),
    maxReceiveCount: policy?.maxReceiveCount,
    deadLetterTargetArn: policy?.deadLetterTargetArn,
  };
}

/** The settings given, in one SetQueueAttributes call; none given, no call. */
async function setSettings(sqs: SQSClient, url: string, s: QueueSettings): Promise<void> {
  const attributes: Record<string, string> = {};
  if (s.visibilityTimeout !== undefined) attributes.VisibilityTimeout = String(s.visibilityTimeout);
  if (s.messageRetentionSeconds !== undefined) attributes.MessageRetentionPeriod = String(s.messageRetentionSeconds);
  if (s.maximumMessageSize !== undefined) attributes.MaximumMessageSize = String(s.maximumMessageSize);
  if (s.deadLetterTargetArn !== undefined) {
    attributes.RedrivePolicy = JSON.stringify({ deadLetterTargetArn: s.deadLetterTargetArn, maxReceiveCount: s.maxReceiveCount });
  }
  if (Object.keys(attributes).length > 0) await sqs.send(new SetQueueAttributesCommand({ QueueUrl: url, Attributes: attributes }));
}

function defined(s: QueueSettings): QueueSettings {
  return Object.fromEntries(Object.entries(s).filter(([, v]) => v !== undefined));
}
