import { createJobTable } from '../adapters/dynamodb-store.js';
import { createDynamoClient } from '../adapters/aws-clients.js';
import { backfillListKeys } from '../adapters/dynamodb-list-keys.js';
import { jobTableSchema, parseConfig, resolveDynamoSettings, type Env } from '../config/env.js';
import { ConfigError, SqsJobsError } from '../core/errors.js';
import { LIST_INDEXES } from '../core/job-list-index.js';
import type { JobStatus } from '../ports/status-store.js';
import { sleep } from '../core/sleep.js';
import { type JobView, JobStatusReader } from '../status/get-job.js';
import { JobCanceller } from '../status/cancel-job.js';
import { integer, type CliContext } from './commands.js';

export interface StoreFlags {
  readonly table?: string;
  readonly dynamodbEndpoint?: string;
  readonly region?: string;
}

/** The job store flags: --table (else SQS_JOBS_JOB_TABLE), --dynamodb-endpoint (else AWS_ENDPOINT_URL_DYNAMODB or AWS_ENDPOINT_URL). */
export function storeFrom(flags: StoreFlags, env: Env) {
  const [source, value] = flags.table !== undefined ? ['--table', flags.table] : ['SQS_JOBS_JOB_TABLE', env.SQS_JOBS_JOB_TABLE];
  if (value === undefined || value === '') throw new ConfigError('name the job store table: --table <name> or SQS_JOBS_JOB_TABLE');
  // Checked here, before any call: DynamoDB would answer a bad name with a bare ValidationException.
  const table = parseConfig(jobTableSchema, value, source, 'invalid job store table');
  const aws = resolveDynamoSettings({ endpoint: flags.dynamodbEndpoint, region: flags.region }, env, {
    endpoint: '--dynamodb-endpoint',
    region: '--region',
  });
  return { table, aws };
}

/**
 * `sqs-jobs store create`: the table and its indexes (createJobTable); when it just added a jobs
 * list index to a table that was there, the backfill of the records' list keys too (a scan of the
 * whole table, so only then: `sqs-jobs store backfill` runs it on demand).
 */
export async function storeCreate(flags: StoreFlags, { out, env }: CliContext): Promise<void> {
  const { table, aws } = storeFrom(flags, env);
  const client = createDynamoClient(aws, {}, env);
  try {
    const added: string[] = [];
    const done = await createJobTable(client, table, (index) => added.push(index));
    const said = {
      created: 'created: on-demand, TTL on expiresAt',
      'index added': `already there; added ${added.join(', ')}`,
      'already there': 'already there',
    };
    out(`job store table: ${table} (${said[done]})`);
    const listAdded = added.filter((name) => LIST_INDEX_NAMES.has(name));
    if (listAdded.length > 0) await backfill(client, table, `${listAdded.join(', ')} just added`, out);
  } finally {
    client.destroy();
  }
}

/**
 * `sqs-jobs store backfill`: give every job record the jobs list keys it lacks (records written
 * before the list indexes, or by a version that did not key them). Changes no index: the one to
 * run against a table the CDK construct made.
 */
export async function storeBackfill(flags: StoreFlags, { out, env }: CliContext): Promise<void> {
  const { table, aws } = storeFrom(flags, env);
  const client = createDynamoClient(aws, {}, env);
  try {
    await backfill(client, table, 'asked', out);
  } finally {
    client.destroy();
  }
}

async function backfill(
  client: Parameters<typeof backfillListKeys>[0],
  table: string,
  why: string,
  out: (text: string) => void,
): Promise<void> {
  const { scanned, backfilled } = await backfillListKeys(client, table);
  out(
    `jobs list: ${backfilled} of ${scanned} job records given their list keys (${why}: a scan of the whole table, ~1 read unit per 8 KB; \`sqs-jobs store backfill\` runs it again, to find none)`,
  );
}

const LIST_INDEX_NAMES: ReadonlySet<string> = new Set(Object.values(LIST_INDEXES).map((i) => i.name));

interface JobFlags extends StoreFlags {
  readonly watch?: boolean;
  readonly every?: string;
  readonly json?: boolean;
}

const FINAL = new Set(['completed', 'failed', 'cancelled']);

/** `sqs-jobs job <id>`: the job's status once, or with --watch redrawn (a live progress bar) until it ends. */
export async function jobCommand(jobId: string, flags: JobFlags, { out, env, signal }: CliContext): Promise<void> {
  const { table, aws } = storeFrom(flags, env);
  const everyMs = (integer(flags.every, '--every', 1) ?? 1) * 1000;
  const reader = new JobStatusReader({ table, ...(aws.endpoint === undefined ? {} : { endpoint: aws.endpoint }), region: aws.region }, env);
  const tty = process.stdout.isTTY === true;
  try {
    for (;;) {
      const view = await reader.get(jobId);
      // Watching a job that no worker has picked up yet (tracked by its definition, not at enqueue): wait for it.
      if (view === undefined && !flags.watch) {
        throw new SqsJobsError('JOB_NOT_FOUND', `no job ${jobId} in ${table} (never tracked, or its record expired)`);
      }
      if (view?.state === 'unknown')
        throw new SqsJobsError('STORE_UNREACHABLE', `the job store (table ${table}) did not answer: ${view.error}`);
      const text = view === undefined ? `${jobId}  not recorded yet` : flags.json ? JSON.stringify(view) : renderJob(view);
      out(flags.watch && tty && !flags.json ? `\x1b[2K\r\x1b[1A\x1b[2K${text}` : text);
      if (!flags.watch || (view !== undefined && FINAL.has(view.state)) || signal.aborted) return;
      await sleep(everyMs, signal);
    }
  } finally {
    reader.close();
  }
}

interface CancelFlags extends StoreFlags {
  readonly memcached?: string;
  readonly lockKeyPrefix?: string;
  readonly json?: boolean;
}

/** `sqs-jobs job cancel <id>`: cancel a tracked job, and print its status after the cancel. */
export async function jobCancelCommand(jobId: string, flags: CancelFlags, { out, env }: CliContext): Promise<void> {
  const { table, aws } = storeFrom(flags, env);
  const canceller = new JobCanceller(
    {
      store: { table, ...(aws.endpoint === undefined ? {} : { endpoint: aws.endpoint }), region: aws.region },
      ...(flags.memcached === undefined ? {} : { memcached: flags.memcached }),
      ...(flags.lockKeyPrefix === undefined ? {} : { lockKeyPrefix: flags.lockKeyPrefix }),
    },
    env,
  );
  try {
    const result = await canceller.cancel(jobId);
    if (result.outcome === 'not-found') {
      throw new SqsJobsError('JOB_NOT_FOUND', `no job ${jobId} in ${table} (never tracked, or its record expired)`);
    }
    if (result.outcome === 'ended') {
      throw new SqsJobsError('JOB_ENDED', `job ${jobId} has ended already (${result.status.state}): nothing to cancel`);
    }
    out(flags.json ? JSON.stringify(result.status) : `cancelled: ${renderJob(result.status)}`);
  } finally {
    canceller.close();
  }
}

/** A progress bar `[#####-----] 37/100 37%`, or the count alone when there is no total. */
function progressBar(done: number, total: number | undefined, width = 24): string {
  if (total === undefined || total <= 0) return `${done} done`;
  const share = Math.min(1, Math.max(0, done / total));
  const filled = Math.round(share * width);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${done}/${total} ${Math.floor(share * 100)}%`;
}

/** One line: job, state, attempt, progress (or the fan-out's children), and what the state says. */
export function renderJob(view: JobView): string {
  if (view.state === 'unknown') return `${view.jobId}  unknown (the job store did not answer: ${view.error})`;
  const s: JobStatus = view;
  const parts = [`${s.jobName} ${s.jobId}`, s.state, `attempt ${s.attempt}`];
  if (s.progress !== undefined) parts.push(progressBar(s.progress.done, s.progress.total));
  if (s.fanOut !== undefined) {
    parts.push(
      `children ${s.fanOut.succeeded} ok, ${s.fanOut.failed} failed of ${s.fanOut.total}${s.fanOut.completionSent ? ', completion sent' : ''}`,
    );
  }
  if (s.state === 'scheduled') parts.push(`runs at ${s.nextAttemptAt}`);
  if (s.state === 'retrying') parts.push(`next attempt at ${s.nextAttemptAt}: ${s.error}`);
  if (s.state === 'failed') parts.push(`${s.reason}: ${s.error}`);
  if (s.state === 'cancelled') parts.push(s.reason ?? 'cancelled');
  if (s.state === 'completed' && s.result !== undefined) parts.push(`result ${JSON.stringify(s.result).slice(0, 200)}`);
  return parts.join('  ');
}
