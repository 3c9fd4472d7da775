import { parseArgs } from 'node:util';
import { createCloudWatchClient, createSqsClient } from '../aws/clients.js';
import { resolveAwsSettings, resolveQueueUrl, type AwsSettings } from '../config.js';
import { ConfigError } from '../errors.js';
import { listDeadLetters, purgeDeadLetters, replayDeadLetters } from '../ops/dlq.js';
import { collectStats } from '../ops/stats.js';
import { queueUrlFromArn, readRedrivePolicy } from '../queues.js';
import { renderDeadLetters, renderStats } from './render.js';

type Out = (line: string) => void;

const common = {
  endpoint: { type: 'string' },
  region: { type: 'string' },
  queue: { type: 'string', multiple: true },
  json: { type: 'boolean', default: false },
} as const;

function positiveInt(value: string | undefined, flag: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new ConfigError(`${flag} must be a whole number >= 1, got "${value}"`);
  return n;
}

function settings(values: { endpoint?: string | undefined; region?: string | undefined }): AwsSettings {
  return resolveAwsSettings({ endpoint: values.endpoint, region: values.region });
}

export async function stats(argv: string[], out: Out, signal: AbortSignal): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: { ...common, namespace: { type: 'string' }, window: { type: 'string' }, watch: { type: 'boolean', default: false }, every: { type: 'string' } },
  });
  const aws = settings(values);
  const sqs = createSqsClient(aws);
  const cw = createCloudWatchClient(aws);
  const options = {
    queueUrls: (values.queue ?? [undefined]).map((q) => resolveQueueUrl(q)),
    namespace: values.namespace ?? process.env.SQS_JOBS_METRICS_NAMESPACE ?? 'SqsJobs',
    windowMinutes: positiveInt(values.window, '--window', 15),
  };
  try {
    const watchSeconds = values.watch ? positiveInt(values.every, '--every', 5) : undefined;
    do {
      const s = await collectStats(sqs, cw, options);
      if (values.json) out(JSON.stringify(s));
      else if (watchSeconds !== undefined && process.stdout.isTTY) out(`\x1b[H\x1b[2J${renderStats(s)}\n(every ${watchSeconds}s; Ctrl-C to stop)`);
      else out(renderStats(s));
      if (watchSeconds !== undefined) await sleep(watchSeconds * 1000, signal);
    } while (watchSeconds !== undefined && !signal.aborted);
  } finally {
    sqs.destroy();
    cw.destroy();
  }
}

/** The DLQ: --dlq, else the one the --queue (or SQS_JOBS_QUEUE_URL) redrive policy names. */
async function resolveDlq(sqs: ReturnType<typeof createSqsClient>, values: { dlq?: string | undefined; queue?: string[] | undefined }) {
  const sourceQueueUrl = values.queue?.[0] !== undefined || process.env.SQS_JOBS_QUEUE_URL ? resolveQueueUrl(values.queue?.[0]) : undefined;
  if (values.dlq !== undefined) return { dlqUrl: resolveQueueUrl(values.dlq), sourceQueueUrl };
  if (sourceQueueUrl === undefined) throw new ConfigError('name the queue: --queue <url> (its DLQ is found from its redrive policy), --dlq <url>, or SQS_JOBS_QUEUE_URL');
  const policy = await readRedrivePolicy(sqs, sourceQueueUrl);
  if (policy === undefined) throw new ConfigError(`${sourceQueueUrl} has no RedrivePolicy, so no DLQ; pass --dlq <url>`);
  return { dlqUrl: await queueUrlFromArn(sqs, policy.deadLetterTargetArn), sourceQueueUrl };
}

export async function dlq(argv: string[], out: Out, signal: AbortSignal): Promise<void> {
  const [action, ...rest] = argv;
  const { values } = parseArgs({
    args: rest,
    options: {
      ...common,
      dlq: { type: 'string' },
      limit: { type: 'string' },
      job: { type: 'string' },
      id: { type: 'string' },
      'dry-run': { type: 'boolean', default: false },
      yes: { type: 'boolean', default: false },
    },
  });
  const sqs = createSqsClient(settings(values));
  try {
    const { dlqUrl, sourceQueueUrl } = await resolveDlq(sqs, values);
    if (action === 'list') {
      const letters = await listDeadLetters(sqs, dlqUrl, positiveInt(values.limit, '--limit', 100));
      out(values.json ? JSON.stringify(letters) : renderDeadLetters(letters));
    } else if (action === 'replay') {
      const result = await replayDeadLetters(sqs, {
        dlqUrl,
        sourceQueueUrl,
        job: values.job,
        id: values.id,
        limit: values.limit === undefined ? undefined : positiveInt(values.limit, '--limit', 1),
        dryRun: values['dry-run'],
        signal,
        onMoved: values.json ? undefined : (l, to) => out(`moved ${l.jobName ?? '?'} ${l.jobId ?? l.messageId} → ${to}`),
      });
      if (values.json) out(JSON.stringify(result));
      else {
        for (const s of result.skipped) out(`left ${s.letter.jobName ?? '?'} ${s.letter.jobId ?? s.letter.messageId}: ${s.why}`);
        out(`${values['dry-run'] ? 'would move' : 'moved'} ${values['dry-run'] ? result.skipped.length : result.moved} message(s) (${result.via === 'move-task' ? 'SQS message move task' : 'send, then delete'})${signal.aborted ? '; interrupted, the rest stays in the DLQ' : ''}`);
      }
    } else if (action === 'purge') {
      if (!values.yes) throw new ConfigError(`dlq purge deletes every message in ${dlqUrl}: add --yes to do it`);
      await purgeDeadLetters(sqs, dlqUrl);
      out(`purged ${dlqUrl}`);
    } else {
      throw new ConfigError('usage: sqs-jobs dlq list|replay|purge [--queue URL | --dlq URL] ...');
    }
  } finally {
    sqs.destroy();
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });
}
