import { parseArgs } from 'node:util';
import { createSqsClient } from '../aws/clients.js';
import { resolveAwsSettings } from '../config.js';
import { ConfigError } from '../errors.js';
import { createProducer } from '../producer.js';
import { createQueues } from '../queues.js';
import { createWorker } from '../worker/worker.js';
import { loadJobs } from './load-jobs.js';

type Out = (line: string) => void;

function integer(value: string | undefined, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n)) throw new ConfigError(`${flag} must be a whole number, got "${value}"`);
  return n;
}

const awsFlags = {
  endpoint: { type: 'string' },
  region: { type: 'string' },
} as const;

export async function queuesCreate(argv: string[], out: Out): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      ...awsFlags,
      name: { type: 'string' },
      'max-receive-count': { type: 'string' },
      'visibility-timeout': { type: 'string' },
      json: { type: 'boolean', default: false },
    },
  });
  if (values.name === undefined) throw new ConfigError('queues create needs --name <queue name>');
  const sqs = createSqsClient(resolveAwsSettings({ endpoint: values.endpoint, region: values.region }));
  try {
    const pair = await createQueues(sqs, {
      name: values.name,
      maxReceiveCount: integer(values['max-receive-count'], '--max-receive-count'),
      visibilityTimeout: integer(values['visibility-timeout'], '--visibility-timeout'),
    });
    if (values.json) out(JSON.stringify(pair));
    else {
      out(`queue: ${pair.queueUrl}`);
      out(`dlq:   ${pair.dlqUrl}  (after ${pair.maxReceiveCount} receives)`);
    }
  } finally {
    sqs.destroy();
  }
}

export async function worker(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      ...awsFlags,
      jobs: { type: 'string' },
      queue: { type: 'string', multiple: true },
      concurrency: { type: 'string' },
      prefetch: { type: 'string' },
      'visibility-timeout': { type: 'string' },
      'wait-time': { type: 'string' },
      'shutdown-timeout-ms': { type: 'string' },
      memcached: { type: 'string' },
      'lock-fail-closed': { type: 'boolean' },
    },
  });
  if (values.jobs === undefined) throw new ConfigError('worker needs --jobs <module or folder that exports jobs>');
  const jobs = await loadJobs(values.jobs);
  const w = createWorker({
    jobs,
    queues: values.queue?.map((q) => {
      const [url, weight] = q.split('@');
      return weight === undefined ? url! : { url: url!, weight: integer(weight, '--queue weight') };
    }),
    endpoint: values.endpoint,
    region: values.region,
    concurrency: integer(values.concurrency, '--concurrency'),
    prefetch: integer(values.prefetch, '--prefetch'),
    visibilityTimeoutSeconds: integer(values['visibility-timeout'], '--visibility-timeout'),
    waitTimeSeconds: integer(values['wait-time'], '--wait-time'),
    shutdownTimeoutMs: integer(values['shutdown-timeout-ms'], '--shutdown-timeout-ms'),
    memcached: values.memcached,
    lockFailClosed: values['lock-fail-closed'],
    handleSignals: true,
  });
  await w.start();
  await new Promise<void>((resolve) => w.once('stopped', resolve));
}

export async function enqueueCommand(argv: string[], out: Out): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      ...awsFlags,
      jobs: { type: 'string' },
      queue: { type: 'string' },
      args: { type: 'string', default: '{}' },
      'job-id': { type: 'string' },
      tenant: { type: 'string' },
      delay: { type: 'string' },
    },
  });
  const [name] = positionals;
  if (name === undefined || values.jobs === undefined) throw new ConfigError('usage: sqs-jobs enqueue <job name> --jobs <module> [--args JSON]');
  let args: unknown;
  try {
    args = JSON.parse(values.args);
  } catch (error) {
    throw new ConfigError(`--args is not JSON: ${(error as Error).message}`);
  }
  const producer = createProducer({ jobs: await loadJobs(values.jobs), queueUrl: values.queue, endpoint: values.endpoint, region: values.region });
  try {
    const result = await producer.enqueue(name, args, {
      jobId: values['job-id'],
      tenant: values.tenant,
      delaySeconds: integer(values.delay, '--delay'),
    });
    out(JSON.stringify(result));
  } finally {
    producer.close();
  }
}
