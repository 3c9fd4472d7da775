import { resolveQueueUrl } from '../config/env.js';
import { ConfigError, SqsJobsError } from '../core/errors.js';
import type { ScheduleView } from '../ops/schedule-view.js';
import type { SyncChange } from '../ops/schedules.js';
import { createSchedules } from '../ops/wiring.js';
import type { ScheduleDefinition } from '../schedules/define.js';
import type { CliContext } from './commands.js';
import { type StoreFlags, storeFrom } from './job-commands.js';
import { loadSchedules } from './load-jobs.js';
import { table } from './render.js';

interface ScheduleFlags extends StoreFlags {
  readonly json?: boolean;
  readonly queue?: string;
  readonly endpoint?: string;
}

/** The schedules service on the store the flags name (else SQS_JOBS_JOB_TABLE). */
function open(flags: ScheduleFlags, env: CliContext['env']) {
  const { table: name, aws } = storeFrom(flags, env);
  const schedules = createSchedules(
    {
      store: { table: name, ...(aws.endpoint === undefined ? {} : { endpoint: aws.endpoint }), region: aws.region },
      ...(flags.queue === undefined ? {} : { queueUrl: flags.queue }),
      ...(flags.endpoint === undefined ? {} : { endpoint: flags.endpoint }),
      region: aws.region,
    },
    env,
  );
  return { schedules, name };
}

async function using<T>(flags: ScheduleFlags, env: CliContext['env'], use: (s: ReturnType<typeof open>) => Promise<T>): Promise<T> {
  const opened = open(flags, env);
  try {
    return await use(opened);
  } finally {
    opened.schedules.close();
  }
}

interface SyncFlags extends ScheduleFlags {
  readonly jobs?: string;
  readonly app?: string;
  readonly dryRun?: boolean;
  readonly allowEmpty?: boolean;
}

/** `sqs-jobs schedules sync --jobs <module> --app <name>`: idempotent; prints each change. */
export async function schedulesSync(flags: SyncFlags, { out, env }: CliContext): Promise<void> {
  if (flags.jobs === undefined) throw new ConfigError('schedules sync needs --jobs <module or folder that exports schedules>');
  if (flags.app === undefined) throw new ConfigError('schedules sync needs --app <name>: the app whose declared schedules these are');
  if (flags.queue === undefined && !env.SQS_JOBS_QUEUE_URL)
    throw new ConfigError("schedules sync needs --queue <url> or SQS_JOBS_QUEUE_URL: where the schedules' jobs are sent");
  const queueUrl = resolveQueueUrl(flags.queue, env, '--queue');
  const app = flags.app;
  const defs: ScheduleDefinition[] = await loadSchedules(flags.jobs, flags.allowEmpty === true ? 'allowed' : 'refused');
  const changes = await using({ ...flags, queue: queueUrl }, env, ({ schedules }) =>
    schedules.sync(defs, { app, dryRun: flags.dryRun === true }),
  );
  if (flags.json) return out(JSON.stringify({ app, dryRun: flags.dryRun === true, changes }));
  out(renderChanges(changes, flags.dryRun === true));
}

function renderChanges(changes: readonly SyncChange[], dry: boolean): string {
  const changed = changes.filter((c) => c.change !== 'unchanged');
  const lines = changes.map((c) => `${dry && c.change !== 'unchanged' ? 'would be ' : ''}${c.change}  ${c.id}`);
  return [...lines, `${changed.length} of ${changes.length} ${dry ? 'would change' : 'changed'}`].join('\n');
}

/** `sqs-jobs schedules list`: every page, as a table (or JSON lines' worth in one document). */
export async function schedulesList(flags: ScheduleFlags, { out, env }: CliContext): Promise<void> {
  const all = await using(flags, env, async ({ schedules }) => {
    const views: ScheduleView[] = [];
    let cursor: string | undefined;
    do {
      const page = await schedules.list(cursor);
      views.push(...page.schedules);
      cursor = page.cursor;
    } while (cursor !== undefined);
    return views.sort((a, b) => a.id.localeCompare(b.id));
  });
  if (flags.json) return out(JSON.stringify(all));
  if (all.length === 0) return out('no schedules');
  out(
    table(
      ['ID', 'OWNER', 'JOB', 'WHEN', 'NEXT (UTC)', 'LAST FIRED (UTC)', 'SKIPPED'],
      all.map((v) => [v.id, v.owner, v.job, when(v), v.paused ? 'paused' : (v.next ?? 'none left'), v.lastFired ?? '-', String(v.skipped)]),
    ),
  );
}

const when = (v: ScheduleView) =>
  v.problem !== undefined ? `unreadable: ${v.problem}` : v.cron !== undefined ? `${v.cron} ${v.tz}` : `every ${v.every}`;

/** `sqs-jobs schedules show <id>`. */
export async function schedulesShow(id: string, flags: ScheduleFlags, { out, env }: CliContext): Promise<void> {
  const view = await using(flags, env, async ({ schedules, name }) => {
    const v = await schedules.get(id);
    if (v === undefined) throw new SqsJobsError('SCHEDULE_NOT_FOUND', `no schedule ${id} in ${name}`);
    return v;
  });
  if (flags.json) return out(JSON.stringify(view));
  const rows: [string, string][] = [
    ['id', view.id],
    ['owner', view.owner],
    ['job', `${view.job} ${JSON.stringify(view.args)}`],
    ['when', when(view)],
    ['overlap', view.overlap],
    ['catch-up', typeof view.catchUp === 'string' ? view.catchUp : `within ${view.catchUp.withinSeconds} s, at most ${view.catchUp.max}`],
    ['queue', view.queueUrl],
    ['state', view.paused ? 'paused' : 'active'],
    ['next (UTC)', view.upcoming.join(', ') || 'none left'],
    ['last fired', view.lastFired === undefined ? '-' : `${view.lastFired}  job ${view.lastJobId}`],
    ['skipped', String(view.skipped)],
  ];
  if (view.start !== undefined) rows.push(['start', view.start]);
  if (view.end !== undefined) rows.push(['end', view.end]);
  // Due by now, each with the job it ran as (`sqs-jobs job <id>`: how it ended; none: skipped, or not fired yet).
  for (const [i, o] of view.recent.entries()) rows.push([i === 0 ? 'last due' : '', `${o.at}  job ${o.jobId}`]);
  out(rows.map(([k, v]) => `${k.padEnd(11)} ${v}`).join('\n'));
}

/** `sqs-jobs schedules pause|resume|trigger|remove <id>`. */
export async function schedulesSteer(
  act: 'pause' | 'resume' | 'trigger' | 'remove',
  id: string,
  flags: ScheduleFlags,
  { out, env }: CliContext,
): Promise<void> {
  const said = await using(flags, env, async ({ schedules, name }) => {
    const missing = () => new SqsJobsError('SCHEDULE_NOT_FOUND', `no schedule ${id} in ${name}`);
    if (act === 'trigger') {
      const sent = await schedules.trigger(id);
      if (sent === undefined) throw missing();
      return { id, done: 'triggered', jobId: sent.jobId };
    }
    if (!(await schedules[act](id))) throw missing();
    return { id, done: { pause: 'paused', resume: 'resumed', remove: 'removed' }[act] };
  });
  out(flags.json ? JSON.stringify(said) : `${said.done}  ${id}${'jobId' in said ? `  job ${said.jobId}` : ''}`);
}
