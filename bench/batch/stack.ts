/**
 * What every scenario stands on: ElasticMQ (started by run.sh), a proxy in front of it that counts
 * the workers' SQS calls by action, fresh queues, and filling them straight to ElasticMQ (the
 * producer's calls are not counted: only what consuming costs is).
 */
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { AnyDefinition } from '../../src/core/job.js';
import type { Producer } from '../../src/index.js';
import { built } from '../lib/built.js';
import { SqsProxy } from '../lib/sqs-proxy.js';

export const EMQ = process.env.SQS_JOBS_ELASTICMQ_URL ?? 'http://127.0.0.1:9424';
export const MEMCACHED = process.env.SQS_JOBS_MEMCACHED ?? '127.0.0.1:11311';
export const FAKE_CREDENTIALS = { AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'x' };

export interface Queue {
  /** Through the counting proxy: what the contender is given. */
  readonly url: string;
  /** Straight to ElasticMQ: for filling and depth checks. */
  readonly directUrl: string;
  readonly dlqDirectUrl: string;
}

export interface Depth {
  readonly visible: number;
  readonly inFlight: number;
  readonly delayed: number;
}

export class Stack {
  readonly direct = new SQSClient({ endpoint: EMQ, region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
  #seq = 0;

  private constructor(readonly proxy: SqsProxy) {}

  static async open(): Promise<Stack> {
    return new Stack(await SqsProxy.start(EMQ));
  }

  async freshQueue(label: string, visibilityTimeout = 30): Promise<Queue> {
    const name = `bb-${label}-${Date.now().toString(36)}-${this.#seq++}`;
    const pair = await built.createQueues(this.direct, { name, visibilityTimeout, maxReceiveCount: 5 });
    return { url: pair.queueUrl.replace(EMQ, this.proxy.url), directUrl: pair.queueUrl, dlqDirectUrl: pair.dlqUrl };
  }

  /** Enqueue with the library's producer (SendMessageBatch of 10), straight to ElasticMQ. */
  async fill(queue: Queue, job: AnyDefinition, args: readonly unknown[]): Promise<void> {
    const producer = this.producerFor(queue);
    try {
      await producer.enqueueMany(job, args as never[]);
    } finally {
      producer.close();
    }
  }

  /** A producer for one queue, straight to ElasticMQ; the caller closes it. */
  producerFor(queue: Queue): Producer {
    return built.createProducer({ queueUrl: queue.directUrl, endpoint: EMQ, region: 'us-east-1' }, FAKE_CREDENTIALS);
  }

  async depth(directUrl: string): Promise<Depth> {
    const out = await this.direct.send(
      new GetQueueAttributesCommand({
        QueueUrl: directUrl,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
      }),
    );
    const a = out.Attributes ?? {};
    return {
      visible: Number(a.ApproximateNumberOfMessages ?? 0),
      inFlight: Number(a.ApproximateNumberOfMessagesNotVisible ?? 0),
      delayed: Number(a.ApproximateNumberOfMessagesDelayed ?? 0),
    };
  }

  /** Wait until the queue holds nothing (every delete landed). */
  async drained(directUrl: string, timeoutMs = 60_000): Promise<void> {
    await waitFor(
      async () => {
        const d = await this.depth(directUrl);
        return d.visible + d.inFlight + d.delayed === 0;
      },
      `queue ${directUrl} to empty`,
      timeoutMs,
    );
  }

  async close(): Promise<void> {
    await this.proxy.close();
    this.direct.destroy();
  }
}

/** Poll `check` every 50 ms until it holds; throw after `timeoutMs`, naming what it waited for. */
export async function waitFor(check: () => boolean | Promise<boolean>, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`gave up after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
