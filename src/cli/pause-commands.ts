import { ConfigError } from '../core/errors.js';
import type { PauseScope } from '../core/pause.js';
import { queueNameOf } from '../core/queue-url.js';
import type { PauseView } from '../ops/pauses.js';
import { createPauses } from '../ops/wiring.js';
import { everySeconds } from '../schedules/every.js';
import type { CliContext } from './commands.js';
import { type StoreFlags, storeFrom } from './job-commands.js';
import { loadJobs } from './load-jobs.js';
import { table } from './render.js';

interface PauseFlags extends StoreFlags {
  readonly queue?: string;
  readonly job?: string;
  readonly tenant?: string;
  readonly jobs?: string;
  readonly memcached?: string;
  readonly lockKeyPrefix?: string;
  readonly json?: boolean;
}

/** The pauses service on the store the flags name (else SQS_JOBS_JOB_TABLE), telling the memcached they name. */
function open(flags: PauseFlags, env: CliContext['env']) {
  const { table: name, aws } = storeFrom(flags, env);
  return createPauses(
    {
      store: { table: name, ...(aws.endpoint === undefined ? {} : { endpoint: aws.endpoint }), region: aws.region },
      ...(flags.memcached === undefined ? {} : { memcached: flags.memcached }),
      ...(flags.lockKeyPrefix === undefined ? {} : { lockKeyPrefix: flags.lockKeyPrefix }),
    },
    env,
  );
}

/** The scope the flags name: --queue (a name or URL), or --job and/or --tenant. */
function scopeOf(flags: PauseFlags): PauseScope {
  const queue = flags.queue === undefined ? undefined : flags.queue.includes('/') ? queueNameOf(flags.queue) : flags.queue;
  return {
    ...(queue === undefined ? {} : { queue }),
    ...(flags.job === undefined ? {} : { job: flags.job }),
    ...(flags.tenant === undefined ? {} : { tenant: flags.tenant }),
  };
}

/** With --jobs, a job type the module does not export is refused (a typo would pause nothing). */
async function checkJob(flags: PauseFlags): Promise<void> {
  if (flags.job === undefined || flags.jobs === undefined) return;
  const jobs = await loadJobs(flags.jobs);
  if (jobs.find(flags.job) === undefined)
    throw new ConfigError(`--job "${flags.job}": ${flags.jobs} exports no such job (it has ${jobs.names().join(', ')}): nothing paused`);
}

/** `sqs-jobs pause --queue <q> | --job <name> [--tenant <id>] | --tenant <id> [--for 30m] [--reason "..."]`. */
export async function pauseCommand(flags: PauseFlags & { for?: string; reason?: string; by?: string }, ctx: CliContext): Promise<void> {
  const forSeconds = flags.for === undefined ? undefined : everySeconds(flags.for);
  if (flags.for !== undefined && forSeconds === undefined)
    throw new ConfigError(`--for "${flags.for}": must be whole units of d, h, m and s in that order, such as '30s', '10m' or '1h30m'`);
  await checkJob(flags);
  const pauses = open(flags, ctx.env);
  try {
    const { pause, told } = await pauses.pause(scopeOf(flags), {
      ...(forSeconds === undefined ? {} : { forSeconds }),
      ...(flags.reason === undefined ? {} : { reason: flags.reason }),
      ...(flags.by === undefined ? {} : { by: flags.by }),
    });
    if (flags.json) return ctx.out(JSON.stringify({ ...pause, told }));
    const until = pause.until === undefined ? ' until resumed' : ` until ${pause.until.toISOString()} (it resumes by itself)`;
    ctx.out(`paused ${pause.what}${until}, by ${pause.by}${pause.reason === undefined ? '' : `: ${pause.reason}`}`);
    ctx.out(
      `${told ? 'Workers stop starting its jobs within about a second' : `Workers see it within 30 s (${untold(pauses)})`}; running jobs finish.`,
    );
    if (pause.scope.queue === undefined)
      ctx.out(
        'Its messages wait in the workers (up to concurrency + prefetch each); the rest go back to their queue for 10 s to 15 min at a time, each time a send, a receive and a delete (about $1.15 a day per 100,000 messages waiting: docs/guide/pause.md). On FIFO queues, pause the queue.',
      );
  } finally {
    pauses.close();
  }
}

/** Why the workers were not told at once. */
const untold = (pauses: { readonly tells: boolean }) =>
  pauses.tells ? 'memcached did not answer' : 'no memcached given: pass --memcached or set SQS_JOBS_MEMCACHED to tell them at once';

/** `sqs-jobs resume …`: the same scope flags as pause. */
export async function resumeCommand(flags: PauseFlags, ctx: CliContext): Promise<void> {
  const pauses = open(flags, ctx.env);
  try {
    const scope = scopeOf(flags);
    const { resumed, told } = await pauses.resume(scope);
    if (flags.json) return ctx.out(JSON.stringify({ scope, resumed, told }));
    if (!resumed) return ctx.out('not paused: nothing to resume');
    ctx.out(
      told ? 'resumed: workers start its jobs again within about a second' : `resumed: workers see it within 30 s (${untold(pauses)})`,
    );
  } finally {
    pauses.close();
  }
}

/** `sqs-jobs pauses`: every pause kept, those in force first. */
export async function pausesCommand(flags: PauseFlags, ctx: CliContext): Promise<void> {
  const pauses = open(flags, ctx.env);
  try {
    const list = await pauses.list();
    if (flags.json) return ctx.out(JSON.stringify(list));
    if (list.length === 0) return ctx.out('nothing is paused');
    ctx.out(table(['PAUSED', 'BY', 'SINCE', 'UNTIL', 'REASON'], list.map(row)));
  } finally {
    pauses.close();
  }
}

/** A pause as a row of `pauses` (and of `stats`). */
export function row(p: PauseView): string[] {
  const until = p.until === undefined ? 'resumed' : p.inForce ? p.until.toISOString() : `${p.until.toISOString()} (ended)`;
  return [p.what, p.by, p.at.toISOString(), until, p.reason ?? ''];
}

/**
 * What `sqs-jobs stats` shows of pauses: those in force, when a job store is named (--table or
 * SQS_JOBS_JOB_TABLE); undefined without one. A store that cannot be read says so in the text.
 */
export async function pausesForStats(flags: StoreFlags, env: CliContext['env']): Promise<{ list?: PauseView[]; text: string } | undefined> {
  if (flags.table === undefined && (env.SQS_JOBS_JOB_TABLE ?? '') === '') return undefined;
  try {
    const pauses = open(flags, env);
    try {
      const list = (await pauses.list()).filter((p) => p.inForce);
      return {
        list,
        text: list.length === 0 ? 'Paused: nothing' : `Paused:\n${table(['PAUSED', 'BY', 'SINCE', 'UNTIL', 'REASON'], list.map(row))}`,
      };
    } finally {
      pauses.close();
    }
  } catch (error) {
    return { text: `Paused: the job store could not be read (${error instanceof Error ? error.message : String(error)})` };
  }
}
