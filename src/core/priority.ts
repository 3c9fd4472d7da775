import { z } from 'zod';

/**
 * Priority tiers. A job's tier picks its lane: `normal` is the queue itself, `high` and `low` are
 * queues of their own named after it (`<name>-high`, `<name>-low`, before any `.fifo`), made by
 * `sqs-jobs queues create --tiers`. Workers serving the lanes start higher tiers first.
 */
const PRIORITIES = ['high', 'normal', 'low'] as const;
export type Priority = (typeof PRIORITIES)[number];

export const prioritySchema = z.enum(PRIORITIES, { message: 'must be high, normal or low' });

/** 0 for high: lower ranks start first. */
export function rankOf(priority: Priority): number {
  return PRIORITIES.indexOf(priority);
}

/** The name of a queue's lane for `priority` (`normal`: the queue's own name). */
export function laneNameFor(name: string, priority: Priority): string {
  if (priority === 'normal') return name;
  return name.endsWith('.fifo') ? `${name.slice(0, -'.fifo'.length)}-${priority}.fifo` : `${name}-${priority}`;
}

/** The URL of a queue's lane for `priority`: its name changed as laneNameFor says, the rest kept. */
export function laneUrlFor(queueUrl: string, priority: Priority): string {
  if (priority === 'normal') return queueUrl;
  const cut = queueUrl.lastIndexOf('/');
  return `${queueUrl.slice(0, cut + 1)}${laneNameFor(queueUrl.slice(cut + 1), priority)}`;
}
