import { createSqsClient } from '../adapters/aws-clients.js';
import { SqsQueuePort } from '../adapters/sqs-queue.js';
import { resolveAwsSettings, type Env } from '../config/env.js';
import type { QueuePort } from '../ports/queue.js';

/** The producer's queue port: the one given, else the SDK adapter on a client made here (which `close` destroys). */
export function producerQueue(
  o: { readonly queue?: QueuePort; readonly endpoint?: string; readonly region?: string },
  env: Env,
): { queue: QueuePort; close: () => void } {
  if (o.queue !== undefined) return { queue: o.queue, close: () => {} };
  const client = createSqsClient(
    resolveAwsSettings({ endpoint: o.endpoint, region: o.region }, env, { endpoint: 'options.endpoint', region: 'options.region' }),
    {},
    env,
  );
  return { queue: new SqsQueuePort(client), close: () => client.destroy() };
}
