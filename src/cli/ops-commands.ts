import { pausesForStats } from './pause-commands.js';
import { createCloudWatchClient, createSqsClient } from '../adapters/aws-clients.js';
import { CloudWatchReader } from '../adapters/cloudwatch-reader.js';
import { SqsQueueAdmin } from '../adapters/sqs-admin.js';
import { SqsQueuePort } from '../adapters/sqs-queue.js';
import { resolveCloudWatchSettings, resolveMetricsNamespace, resolveQueueUrl, type Env } from '../config/env.js';
import type { ArchiveStore } from '../ports/archive.js';
import { listDeadLetters } from '../ops/dlq-scan.js';
import { replayDeadLetters } from '../ops/replay.js';
import { purgeDeadLetters } from '../ops/purge.js';
import { describeFilter, isFiltered } from '../ops/dlq-filter.js';
import { collectStats } from '../ops/stats.js';
import { subscribersOf } from './event-commands.js';
import { integer, sqsSettings, UsageError, type AwsFlags, type CliContext } from './commands.js';
import { type DlqFlags, type FilterFlags, filterOf, letterName, withDlq } from './dlq-flags.js';
import { renderDeadLetters, renderStats } from './render.js';

interface StatsFlags extends AwsFlags {
  readonly queue?: string[] | undefined;
  readonly namespace?: string;
  readonly window?: string;
  readonly watch?: boolean;
  readonly every?: string;
  readonly json?: boolean;
  readonly cloudwatchEndpoint?: string;
  readonly jobs?: string;
  readonly table?: string;
  readonly dynamodbEndpoint?: string;
}

export async function stats(flags: StatsFlags, { out, env, signal }: CliContext): Promise<void> {
  // With --jobs, the subscriber queues of its jobs that run on events are shown; the queue is then optional.
  const subscribers = flags.jobs === undefined ? [] : await subscribersOf(flags.jobs);
  const queues = flags.queue ?? (subscribers.length > 0 && !hasQueueUrl(env) ? [] : [undefined]);
  const options = {
    subscribers,
    queueUrls: queues.map((q) => resolveQueueUrl(q, env, '--queue')),
    namespace: resolveMetricsNamespace(flags.namespace, env, '--namespace'),
    windowMinutes: integer(flags.window, '--window', 1) ?? 15,
  };
  const watchSeconds = flags.watch ? (integer(flags.every, '--every', 1) ?? 5) : undefined;
  const sqs = createSqsClient(sqsSettings(flags, env), {}, env);
  // CloudWatch has its own endpoint: --cloudwatch-endpoint, AWS_ENDPOINT_URL_CLOUDWATCH or AWS_ENDPOINT_URL, never SQS's.
  const cw = createCloudWatchClient(
    resolveCloudWatchSettings({ endpoint: flags.cloudwatchEndpoint, region: flags.region }, env, {
      endpoint: '--cloudwatch-endpoint',
      region: '--region',
    }),
    {},
    env,
  );
  const sources = { queue: new SqsQueuePort(sqs), admin: new SqsQueueAdmin(sqs), metrics: new CloudWatchReader(cw) };
  try {
    do {
      const [s, paused] = await Promise.all([collectStats(sources, options), pausesForStats(flags, env)]);
      const text = `${renderStats(s, options.namespace)}${paused === undefined ? '' : `\n\n${paused.text}`}`;
      if (flags.json) out(JSON.stringify(paused?.list === undefined ? s : { ...s, pauses: paused.list }));
      else if (watchSeconds !== undefined && process.stdout.isTTY) out(`\x1b[H\x1b[2J${text}\n(every ${watchSeconds}s; Ctrl-C to stop)`);
      else out(text);
      if (watchSeconds !== undefined) await sleep(watchSeconds * 1000, signal);
    } while (watchSeconds !== undefined && !signal.aborted);
  } finally {
    sqs.destroy();
    cw.destroy();
  }
}

const hasQueueUrl = (env: Env) => env.SQS_JOBS_QUEUE_URL !== undefined && env.SQS_JOBS_QUEUE_URL !== '';

export async function dlqList(flags: DlqFlags & FilterFlags & { limit?: string; json?: boolean }, { out, env }: CliContext): Promise<void> {
  const limit = integer(flags.limit, '--limit', 1) ?? 100;
  const filter = filterOf(flags);
  await withDlq(flags, env, async ({ queue, admin }, { dlqUrl }) => {
    const letters = await listDeadLetters(queue, dlqUrl, limit, isFiltered(filter) ? filter : undefined);
    if (flags.json) {
      out(JSON.stringify(letters));
      return;
    }
    out(renderDeadLetters(letters));
    if (isFiltered(filter)) {
      out(`shown ${letters.length} matching ${describeFilter(filter)}${letters.length >= limit ? ` (--limit ${limit})` : ''}`);
      return;
    }
    // Say so when the DLQ holds more than was shown: past --limit, or held by someone (not listable now).
    const { visible, inFlight } = await admin.counts(dlqUrl);
    if (visible + inFlight > letters.length) {
      const held = inFlight > 0 ? `; ${inFlight} in flight (held by a consumer or a replay), not listable now` : '';
      out(
        `shown ${letters.length} of about ${visible + inFlight} in the DLQ${letters.length >= limit ? ` (--limit ${limit})` : ''}${held}`,
      );
    }
  });
}

interface DlqReplayFlags extends DlqFlags, FilterFlags {
  readonly limit?: string;
  readonly dryRun?: boolean;
  readonly json?: boolean;
}

/**
 * `dlq replay` from the DLQ (`dlq replay --from` is dlq-archive-commands.ts'). With `archive`
 * (`--archive`), each message moved that has a record there is marked replayed in it.
 */
export async function dlqReplay(
  flags: DlqReplayFlags,
  { out, env, signal }: CliContext,
  archive?: { readonly store: ArchiveStore; readonly prefix: string; readonly url: string },
): Promise<void> {
  const limit = integer(flags.limit, '--limit', 1);
  const dryRun = flags.dryRun ?? false;
  await withDlq(flags, env, async ({ queue }, { dlqUrl, sourceQueueUrl }) => {
    const result = await replayDeadLetters(queue, {
      dlqUrl,
      sourceQueueUrl,
      filter: filterOf(flags),
      limit,
      dryRun,
      signal,
      archive,
      onMoved: flags.json ? undefined : (l, to) => out(`moved ${letterName(l)} → ${to}`),
    });
    if (flags.json) out(JSON.stringify(result));
    else {
      for (const s of result.skipped) out(`left ${letterName(s.letter)}: ${s.why}`);
      const count = dryRun ? result.skipped.length : result.moved;
      out(`${dryRun ? 'would move' : 'moved'} ${count} message(s) (send, then delete; replay ${result.replayId})`);
      if (archive !== undefined && !dryRun) out(`marked ${result.marked} as replayed in ${archive.url} (those it had a record of)`);
      const { movedByThisReplay, arrivedAfterStart, notChosen } = result.passedOver;
      const notes = [
        movedByThisReplay > 0 ? `${movedByThisReplay} moved by this replay and dead-lettered again` : '',
        arrivedAfterStart > 0 ? `${arrivedAfterStart} dead-lettered after the replay began` : '',
        notChosen > 0 ? `${notChosen} not chosen` : '',
      ].filter(Boolean);
      if (notes.length > 0) out(`left in the DLQ: ${notes.join(', ')}`);
      if (signal.aborted) out('interrupted: the rest stays in the DLQ');
    }
  });
}

export async function dlqPurge(
  flags: DlqFlags & FilterFlags & { yes?: boolean; dryRun?: boolean; json?: boolean },
  { out, env, signal }: CliContext,
): Promise<void> {
  const filter = filterOf(flags);
  if (!flags.yes && !flags.dryRun) {
    // A usage error, found before any call; the flags are checked first, so garbage is still CONFIG_INVALID.
    sqsSettings(flags, env);
    const queue = flags.queue !== undefined || env.SQS_JOBS_QUEUE_URL ? resolveQueueUrl(flags.queue, env, '--queue') : undefined;
    const dlq = flags.dlq === undefined ? undefined : resolveQueueUrl(flags.dlq, env, '--dlq');
    const target = dlq ?? (queue === undefined ? 'the DLQ' : `the DLQ of ${queue}`);
    const what = isFiltered(filter) ? `the messages in ${target} matching ${describeFilter(filter)}` : `every message in ${target}`;
    throw new UsageError(`purge deletes ${what}: add --yes to do it (or --dry-run to count them)`);
  }
  await withDlq(flags, env, async ({ queue, admin }, { dlqUrl }) => {
    if (!isFiltered(filter) && !flags.dryRun) {
      await admin.purge(dlqUrl);
      out(flags.json ? JSON.stringify({ purged: dlqUrl }) : `purged ${dlqUrl}`);
      return;
    }
    const result = await purgeDeadLetters(queue, { dlqUrl, filter, dryRun: flags.dryRun ?? false, signal });
    if (flags.json) out(JSON.stringify(result));
    else {
      if (!flags.dryRun) for (const s of result.skipped) out(`left ${letterName(s.letter)}: ${s.why}`);
      out(
        `${flags.dryRun ? 'would delete' : 'deleted'} ${flags.dryRun ? result.matched : result.deleted} message(s) matching ${describeFilter(filter)}`,
      );
      if (signal.aborted) out('interrupted: the rest stays in the DLQ');
    }
  });
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}
