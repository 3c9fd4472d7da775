import { type Command, Option } from 'commander';
import { createSqsClient } from '../adapters/aws-clients.js';
import { openS3Archive, resolveS3Settings } from '../adapters/s3-archive.js';
import { SqsQueuePort } from '../adapters/sqs-queue.js';
import { type Env, resolveQueueUrl } from '../config/env.js';
import { ConfigError } from '../core/errors.js';
import { parseArchiveUrl } from '../ops/archive-format.js';
import { replayArchived } from '../ops/archive-replay.js';
import { type ArchiveResult, ageText, archiveDeadLetters, checkRetention, type RetentionMargin } from '../ops/dlq-archive.js';
import { type AwsFlags, type CliContext, integer, sqsSettings, UsageError } from './commands.js';
import { ageSeconds, type DlqFlags, type FilterFlags, filterOf, letterName, withDlq } from './dlq-flags.js';
import { dlqReplay } from './ops-commands.js';

/*
 * `dlq archive`, and `dlq replay`'s S3 side: dead letters kept in S3 beyond the DLQ's retention
 * (src/ops/dlq-archive.ts, archive-replay.ts). program.ts registers `archive` with
 * addDlqArchiveCommand, and `replay` with withReplaySources' flags and dlqReplayCommand as its one
 * action: with --from it reads the archive; without, the DLQ (ops-commands.ts' dlqReplay),
 * marking what it moves in the archive --archive names.
 */

/** The longest age `--older-than` takes: SQS keeps a message 14 days at most. */
const MAX_AGE_SECONDS = 14 * 86_400;

interface S3Flags extends AwsFlags {
  readonly s3Endpoint?: string;
  readonly kmsKey?: string;
}

/** `dlq archive`, on the `dlq` command; `dlqCommand` adds what every dlq command takes (--queue, --dlq, AWS). */
export function addDlqArchiveCommand(dlqCommand: (name: string, description: string) => Command, ctx: CliContext): void {
  withS3(
    dlqCommand('archive', 'write dead letters to S3 (one JSON object each) before SQS expires them, deleting each only once S3 has it')
      .option(
        '--older-than <age>',
        "those sent to the DLQ at least this long ago: seconds, or '12h', '10d'; below its retention (required)",
      )
      .option('--to <s3-url>', 's3://bucket/prefix to write them under (required)'),
    'write with SSE-KMS under this KMS key (id, alias or ARN) and an S3 Bucket Key; default: the bucket default encryption',
  )
    .option('--limit <n>', 'at most this many')
    .option('--dry-run', 'count what would be archived (and check the bucket is there)')
    .option('--json', 'print JSON')
    .action((flags) => dlqArchive(flags, ctx));
}

/** `dlq replay`'s archive flags: --from (read the archive instead of the DLQ), --archive (mark it), and the S3 flags of both. */
export function withReplaySources(replay: Command): Command {
  return withS3(
    replay
      .option('--from <s3-url>', 'replay from this archive (s3://bucket/prefix, made by `dlq archive`) instead of the DLQ')
      .option('--archive <s3-url>', 'replaying the DLQ: mark what it moves as replayed in this archive, so `--from` leaves it'),
    'with --from or --archive: write the replay marks with SSE-KMS under this key (where the bucket demands it)',
  );
}

const withS3 = (c: Command, kms: string) => c.option('--kms-key <id>', kms).addOption(s3Endpoint());

/** --s3-endpoint, for every command that reads or writes an archive (`dashboard --archive` too). */
export const s3Endpoint = () =>
  new Option('--s3-endpoint <url>', 'S3 endpoint (default: AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL; never the SQS one)');

/** The archive a flag names, checked (no call made yet): its S3 store, where it is, and the client to close. */
function openArchive(url: string | undefined, flag: string, flags: S3Flags, env: Env) {
  if (url === undefined) throw new ConfigError(`${flag} s3://bucket/prefix is required`);
  const where = parseArchiveUrl(url, flag);
  const settings = resolveS3Settings({ endpoint: flags.s3Endpoint, region: flags.region }, env, {
    endpoint: '--s3-endpoint',
    region: '--region',
  });
  return openS3Archive(where, settings, { kmsKeyId: flags.kmsKey }, env);
}

type ArchiveFlags = DlqFlags & S3Flags & { olderThan?: string; to?: string; limit?: string; dryRun?: boolean; json?: boolean };

async function dlqArchive(flags: ArchiveFlags, { out, env, signal, status }: CliContext): Promise<void> {
  const olderThanSeconds = ageSeconds(flags.olderThan, '--older-than');
  if (olderThanSeconds === undefined) throw new ConfigError("--older-than <age> is required: seconds, or '12h', '10d'");
  if (olderThanSeconds > MAX_AGE_SECONDS)
    throw new ConfigError(`--older-than: must be at most 14d, SQS's longest retention (got ${JSON.stringify(flags.olderThan)})`);
  const limit = integer(flags.limit, '--limit', 1);
  const archive = openArchive(flags.to, '--to', flags, env);
  try {
    await withDlq(flags, env, async ({ queue, admin }, { dlqUrl }) => {
      const margin = await checkRetention(admin, dlqUrl, olderThanSeconds);
      if (flags.dryRun) await archive.store.check();
      const result = await archiveDeadLetters(queue, archive.store, {
        dlqUrl,
        prefix: archive.prefix,
        olderThanSeconds,
        limit,
        dryRun: flags.dryRun ?? false,
        signal,
        onArchived: flags.json ? undefined : (l, key) => out(`archived ${letterName(l)} → s3://${archive.bucket}/${key}`),
      });
      const failed = result.stoppedBy !== undefined || result.skipped.some((s) => s.why.startsWith('not archived'));
      if (failed && !flags.dryRun && status !== undefined) status.code = 1;
      const said = { url: archive.url, olderThanSeconds, dryRun: flags.dryRun, aborted: signal.aborted };
      if (flags.json) out(JSON.stringify({ ...result, retention: margin }));
      else for (const line of archiveReport(result, margin, said)) out(line);
    });
  } finally {
    archive.close();
  }
}

/** What `dlq archive` says when it is done (without --json). */
function archiveReport(
  r: ArchiveResult,
  m: RetentionMargin,
  o: { url: string; olderThanSeconds: number; dryRun: boolean | undefined; aborted: boolean },
): string[] {
  const lines = (o.dryRun ? [] : r.skipped).map((s) => `left ${letterName(s.letter)}: ${s.why}`);
  lines.push(`${o.dryRun ? 'would archive' : 'archived'} ${o.dryRun ? r.matched : r.archived} message(s) to ${o.url} (write, then delete)`);
  const pastLimit = r.passedOver.notChosen - r.notOldEnough;
  const left = [r.notOldEnough > 0 ? `${r.notOldEnough} not old enough` : '', pastLimit > 0 ? `${pastLimit} past --limit` : ''];
  if (left.some(Boolean)) lines.push(`left in the DLQ: ${left.filter(Boolean).join(', ')}`);
  if (r.stoppedBy !== undefined) lines.push(`stopped: every write of a batch failed (${r.stoppedBy}); the rest stays in the DLQ`);
  else if (o.aborted) lines.push('interrupted: the rest stays in the DLQ');
  const [retention, margin] = [ageText(m.retentionSeconds), ageText(m.marginSeconds)];
  lines.push(
    `margin ${margin}: the DLQ keeps a message ${retention} (MessageRetentionPeriod), --older-than ${ageText(o.olderThanSeconds)}; run this at least every ${margin}`,
  );
  if (m.tight) lines.push('warning: a margin under a day: one late run and SQS deletes what it would have archived; lower --older-than');
  return lines;
}

interface ReplayFlags extends DlqFlags, S3Flags, FilterFlags {
  readonly from?: string;
  readonly archive?: string;
  readonly limit?: string;
  readonly dryRun?: boolean;
  readonly json?: boolean;
}

/**
 * `dlq replay`'s one action: from the archive with --from, else from the DLQ (marking what it moves
 * in the archive --archive names). Flags that mean nothing together are a usage error (exit 2).
 */
export async function dlqReplayCommand(flags: ReplayFlags, ctx: CliContext): Promise<void> {
  if (flags.from !== undefined && flags.archive !== undefined)
    throw new UsageError('--from replays from the archive, --archive marks it while replaying the DLQ: give one');
  if (flags.from !== undefined && flags.dlq !== undefined)
    throw new UsageError('--from reads the archive, not a DLQ: drop --dlq (--queue names where records that name no source queue go)');
  const s3Flag = flags.kmsKey !== undefined ? '--kms-key' : flags.s3Endpoint !== undefined ? '--s3-endpoint' : undefined;
  if (s3Flag !== undefined && flags.from === undefined && flags.archive === undefined)
    throw new UsageError(`${s3Flag} is for an S3 archive: it goes with --from or --archive`);
  if (flags.from !== undefined) return dlqReplayFromArchive(flags, ctx);
  if (flags.archive === undefined) return dlqReplay(flags, ctx);
  filterOf(flags); // a bad filter is named before the archive is opened
  const archive = openArchive(flags.archive, '--archive', flags, ctx.env);
  try {
    await archive.store.check(); // a wrong bucket is said at once, not as a failed mark per message
    await dlqReplay(flags, ctx, archive);
  } finally {
    archive.close();
  }
}

async function dlqReplayFromArchive(flags: ReplayFlags, { out, env, signal }: CliContext): Promise<void> {
  const limit = integer(flags.limit, '--limit', 1);
  const filter = filterOf(flags);
  const sourceQueueUrl = flags.queue !== undefined || env.SQS_JOBS_QUEUE_URL ? resolveQueueUrl(flags.queue, env, '--queue') : undefined;
  const archive = openArchive(flags.from, '--from', flags, env);
  const sqs = createSqsClient(sqsSettings(flags, env), {}, env);
  try {
    const result = await replayArchived(new SqsQueuePort(sqs), archive.store, {
      prefix: archive.prefix,
      sourceQueueUrl,
      filter,
      limit,
      dryRun: flags.dryRun ?? false,
      signal,
      onMoved: flags.json ? undefined : (l, to) => out(`moved ${letterName(l)} → ${to}`),
    });
    if (flags.json) {
      out(JSON.stringify(result));
      return;
    }
    for (const s of result.skipped) out(`left ${s.letter === undefined ? s.key : letterName(s.letter)}: ${s.why}`);
    const count = flags.dryRun ? result.matched : result.moved;
    out(`${flags.dryRun ? 'would move' : 'moved'} ${count} message(s) from ${archive.url} (send, then mark; replay ${result.replayId})`);
    const { replayedBefore, movedByThisReplay, archivedAfterStart, notChosen } = result.passedOver;
    const notes = [
      replayedBefore > 0 ? `${replayedBefore} replayed before` : '',
      movedByThisReplay > 0 ? `${movedByThisReplay} moved by this replay and archived again` : '',
      archivedAfterStart > 0 ? `${archivedAfterStart} archived after the replay began` : '',
      notChosen > 0 ? `${notChosen} not matched by the filter` : '',
    ].filter(Boolean);
    if (notes.length > 0) out(`not sent: ${notes.join(', ')}`);
    if (signal.aborted) out('interrupted: the rest was not sent');
  } finally {
    sqs.destroy();
    archive.close();
  }
}
