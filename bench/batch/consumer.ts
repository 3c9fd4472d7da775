/**
 * The peer: bbc/sqs-consumer with handleMessageBatch (batchSize 10), `count` Consumers on the
 * queue so that, like sqs-jobs at concurrency 10, ten handler calls can run at once. Each handler
 * call makes either one downstream call per key present in its batch (the downstream takes one key
 * per call, as it does for sqs-jobs' keyed batches; the calls of a batch run in parallel) or one
 * call for the whole batch (a downstream that accepts mixed keys: the lenient case).
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import { Consumer } from 'sqs-consumer';
import type { Downstream } from './downstream.js';
import type { ItemArgs } from './jobs.js';

export type ConsumerMode = 'per-key' | 'whole-batch';

export interface Consumers {
  stop(): Promise<void>;
}

export function startConsumers(
  endpoint: string,
  queueUrl: string,
  count: number,
  mode: ConsumerMode,
  downstream: Downstream,
  done: (item: ItemArgs) => void,
): Consumers {
  let stopping = false;
  const report = (what: string) => (e: Error) => stopping || console.error(`  sqs-consumer ${what}: ${e.message}`);
  const sqs = new SQSClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
  const consumers = Array.from({ length: count }, () => {
    const c = Consumer.create({
      queueUrl,
      sqs,
      batchSize: 10,
      handleMessageBatch: async (messages) => {
        const items = messages.map((m) => (JSON.parse(m.Body ?? '{}') as { args: ItemArgs }).args);
        if (mode === 'whole-batch') await downstream.call(items.length);
        else await Promise.all([...countByKey(items).values()].map((n) => downstream.call(n)));
        for (const item of items) done(item);
        return messages; // all of them succeeded: delete them (DeleteMessageBatch)
      },
    });
    c.on('error', report('error'));
    c.on('processing_error', report('processing error'));
    c.start();
    return c;
  });
  return {
    /** Called once the queue is empty: the open long polls are aborted (they can strand nothing). */
    async stop() {
      stopping = true;
      await Promise.all(
        consumers.map(
          (c) =>
            new Promise<void>((resolve) => {
              if (!c.status.isRunning) return resolve();
              c.once('stopped', () => resolve());
              c.stop({ abort: true });
            }),
        ),
      );
      sqs.destroy();
    },
  };
}

function countByKey(items: readonly ItemArgs[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const i of items) counts.set(i.key, (counts.get(i.key) ?? 0) + 1);
  return counts;
}
