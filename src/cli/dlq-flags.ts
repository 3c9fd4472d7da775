import { createSqsClient } from '../adapters/aws-clients.js';
import { SqsQueueAdmin } from '../adapters/sqs-admin.js';
import { SqsQueuePort } from '../adapters/sqs-queue.js';
import { type Env, resolveQueueUrl } from '../config/env.js';
import { ConfigError } from '../core/errors.js';
import type { DeadLetter } from '../ops/dlq.js';
import { type DeadLetterFilter, deadLetterFilterSchema } from '../ops/dlq-filter.js';
import { everySeconds } from '../schedules/every.js';
import { type AwsFlags, sqsSettings } from './commands.js';

/*
 * What every `dlq` command reads the same way (ops-commands.ts: list, replay, purge;
 * dlq-archive-commands.ts: archive, replay --from): which DLQ, the filter, an age, and how a dead
 * letter is named in a line of output.
 */

/** --queue and --dlq, which every `dlq` command takes. */
export interface DlqFlags extends AwsFlags {
  readonly queue?: string;
  readonly dlq?: string;
}

/** The filter flags every DLQ command takes. */
export interface FilterFlags {
  readonly job?: string;
  readonly id?: string;
  readonly reason?: string;
  readonly tenant?: string;
  readonly error?: string;
  readonly olderThan?: string;
  readonly newerThan?: string;
}

/** The SQS parts a DLQ command works with: the queue port (messages) and the queue admin (counts, settings, purge). */
export interface DlqTools {
  readonly queue: SqsQueuePort;
  readonly admin: SqsQueueAdmin;
}

/** The DLQ: --dlq, else the one the --queue (or SQS_JOBS_QUEUE_URL) redrive policy names; and the source queue when named. */
export async function resolveDlq(
  queue: SqsQueuePort,
  flags: DlqFlags,
  env: Env,
): Promise<{ dlqUrl: string; sourceQueueUrl: string | undefined }> {
  const sourceQueueUrl = flags.queue !== undefined || env.SQS_JOBS_QUEUE_URL ? resolveQueueUrl(flags.queue, env, '--queue') : undefined;
  if (flags.dlq !== undefined) return { dlqUrl: resolveQueueUrl(flags.dlq, env, '--dlq'), sourceQueueUrl };
  if (sourceQueueUrl === undefined)
    throw new ConfigError('name the queue: --queue <url> (its DLQ is found from its redrive policy), --dlq <url>, or SQS_JOBS_QUEUE_URL');
  const target = await queue.deadLetterTarget(sourceQueueUrl);
  if (target === undefined) throw new ConfigError(`${sourceQueueUrl} has no RedrivePolicy, so no DLQ; pass --dlq <url>`);
  return { dlqUrl: target.deadLetterQueueUrl, sourceQueueUrl };
}

/** Check the flags, then run `body` with the SQS parts and the DLQ it names; the client is closed after. */
export async function withDlq<T>(
  flags: DlqFlags,
  env: Env,
  body: (tools: DlqTools, urls: { dlqUrl: string; sourceQueueUrl: string | undefined }) => Promise<T>,
): Promise<T> {
  const sqs = createSqsClient(sqsSettings(flags, env), {}, env);
  const tools = { queue: new SqsQueuePort(sqs), admin: new SqsQueueAdmin(sqs) };
  try {
    return await body(tools, await resolveDlq(tools.queue, flags, env));
  } finally {
    sqs.destroy();
  }
}

/** An age flag: whole seconds, or whole units ('10d', '12h', '1h30m', as a schedule's `every`); undefined when not given. */
export function ageSeconds(text: string | undefined, flag: string): number | undefined {
  if (text === undefined) return undefined;
  const seconds = /^\d+$/.test(text) ? Number(text) : everySeconds(text);
  if (seconds === undefined)
    throw new ConfigError(
      `${flag}: must be a whole number of seconds, or whole units of d, h, m, s such as '10d' or '1h30m' (got ${JSON.stringify(text)})`,
    );
  return seconds;
}

/** The dead-letter filter the flags name (ages in seconds or units); errors name the flag. */
export function filterOf(flags: FilterFlags): DeadLetterFilter {
  const filter = {
    job: flags.job,
    id: flags.id,
    reason: flags.reason,
    tenant: flags.tenant,
    error: flags.error,
    olderThanSeconds: ageSeconds(flags.olderThan, '--older-than'),
    newerThanSeconds: ageSeconds(flags.newerThan, '--newer-than'),
  };
  const parsed = deadLetterFilterSchema.safeParse(Object.fromEntries(Object.entries(filter).filter(([, v]) => v !== undefined)));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const flag = `--${String(issue.path[0])
      .replace(/Seconds$/, '')
      .replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
    throw new ConfigError(`${flag}: ${issue.message}`);
  }
  return parsed.data;
}

/** A dead letter as a line of output names it: its job and job id (`?` and the message id where it has none). */
export const letterName = (l: Pick<DeadLetter, 'jobName' | 'jobId' | 'messageId'>): string =>
  `${l.jobName ?? '?'} ${l.jobId ?? l.messageId}`;
