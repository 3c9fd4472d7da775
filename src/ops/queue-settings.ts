import type { QueueAdmin, QueueSettings } from '../ports/queue-admin.js';

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

/**
 * Make the queue if it is missing, with `defaults` under `wanted`; on an existing queue set only
 * the settings in `wanted` that differ, leaving the rest as they are. A redrive policy is set
 * whole, so a queue given a DLQ but no count keeps its own count (`defaults`' when it had none).
 * Appends what it did to `changes`; answers the URL and the settings the queue now has.
 */
export async function ensureQueue(
  admin: QueueAdmin,
  name: string,
  fifo: boolean,
  wanted: QueueSettings,
  defaults: QueueSettings,
  changes: QueueChange[],
): Promise<{ url: string; settings: QueueSettings }> {
  const existing = await admin.findQueue(name);
  if (existing === undefined) {
    const url = await admin.createQueue(name, fifo);
    const settings = { ...defaults, ...defined(wanted) };
    await admin.applySettings(url, settings);
    changes.push({ queue: name, setting: 'created' });
    return { url, settings };
  }
  const current = await admin.settings(existing);
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
  await admin.applySettings(
    existing,
    redrive ? { ...update, maxReceiveCount: target.maxReceiveCount, deadLetterTargetArn: target.deadLetterTargetArn } : update,
  );
  for (const key of changed) {
    const from = current[key];
    changes.push({ queue: name, setting: LABELS[key], ...(from === undefined ? {} : { from }), to: target[key]! });
  }
  return { url: existing, settings: { ...current, ...target } };
}

function defined(s: QueueSettings): QueueSettings {
  return Object.fromEntries(Object.entries(s).filter(([, v]) => v !== undefined));
}
