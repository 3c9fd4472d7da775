import { Command, CommanderError } from 'commander';
import { cloudwatchEndpoint, collect, filtered, withAws, withStore } from './flags.js';
import { dashboardCommand, withDashboardAuth } from './dashboard-command.js';
import type { Env } from '../config/env.js';
import { type ErrorCode, SqsJobsError } from '../core/errors.js';
import { enqueueCommand, UsageError, worker, type CliContext } from './commands.js';
import { publishCommand } from './event-commands.js';
import { addProvisionCommands } from './provision-program.js';
import { jobCancelCommand, jobCommand, storeBackfill, storeCreate } from './job-commands.js';
import { dlqList, dlqPurge, stats } from './ops-commands.js';
import { addDlqArchiveCommand, dlqReplayCommand, s3Endpoint, withReplaySources } from './dlq-archive-commands.js';
import { addLocalCommand } from './local-command.js';
import { addScheduleCommands } from './schedule-program.js';
import { addPauseCommands } from './pause-program.js';
import { addJobsCommands } from './jobs-program.js';
import { packageVersion } from './version.js';
import { configureTree, pathOf } from './tree.js';

interface CliIo {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  readonly env: Env;
  readonly signal: AbortSignal;
  /** Where a command leaves an exit code other than 0 without an error (run() makes it). */
  readonly status?: { code: number };
}

const ENVIRONMENT = `
Environment:
  SQS_JOBS_QUEUE_URL           the queue when no --queue is given
  SQS_JOBS_ENDPOINT, else AWS_ENDPOINT_URL_SQS, else AWS_ENDPOINT_URL
                               SQS endpoint other than AWS's (--endpoint wins)
  AWS_ENDPOINT_URL_CLOUDWATCH, else AWS_ENDPOINT_URL
                               CloudWatch endpoint (--cloudwatch-endpoint wins)
  AWS_REGION, else AWS_DEFAULT_REGION   default us-east-1
  SQS_JOBS_MEMCACHED           [tls://]host:port[,host:port] for the worker's dedupe lock
  SQS_JOBS_MEMCACHED_CA        with tls://: a PEM file of the CA that signed memcached's certificate
  SQS_JOBS_MEMCACHED_SERVERNAME  with tls://: the name memcached's certificate holds, when not the host
  SQS_JOBS_METRICS             cloudwatch (default), emf or off
  SQS_JOBS_METRICS_NAMESPACE   default SqsJobs
  SQS_JOBS_JOB_TABLE           the job store's DynamoDB table (job status, progress, fan-out)
  AWS_ENDPOINT_URL_DYNAMODB    its endpoint, else AWS_ENDPOINT_URL
  SQS_JOBS_LOG_LEVEL           fatal, error, warn, info (default), debug, trace or silent`;

/**
 * Required flags are checked by the commands (CONFIG_INVALID), not by commander, so that an
 * unknown option is reported first: it is the likelier mistake.
 *
 * The `sqs-jobs` command. Every command and subcommand answers --help/-h with its own usage;
 * usage errors (an unknown command or option, a missing argument, `dlq purge` without --yes) name
 * the command and exit 2; configuration errors print `CONFIG_INVALID` and the rule and exit 1;
 * `job <id>` exits 3 when there is no such job (`schedules show <id>` and the like, no such schedule) and 4 when the job store does not answer; `job cancel
 * <id>` also exits 4 when memcached does not answer, and 5 when the job has ended already.
 */
function buildProgram(io: CliIo): Command {
  const ctx: CliContext = { out: (line) => io.out(`${line}\n`), env: io.env, signal: io.signal, status: io.status };
  const program = new Command('sqs-jobs')
    .description('Background jobs on Amazon SQS: run workers, create queues, enqueue, read stats, manage the dead-letter queue.')
    .version(packageVersion(), '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show usage')
    .helpCommand('help [command]', 'show usage of a command')
    .addHelpText('after', ENVIRONMENT);

  addProvisionCommands(program, ctx);
  addLocalCommand(program, ctx);
  addScheduleCommands(program, ctx);
  addPauseCommands(program, ctx);
  addJobsCommands(program, ctx);

  withAws(program.command('worker').description('run a worker for the jobs a module exports, until SIGTERM/SIGINT'))
    .option('--jobs <module>', 'module or folder (its index) that exports jobs made by defineJob() or defineBatchJob() (required)')
    .option(
      '--queue <url[@weight]>',
      'queue URL, repeatable; a weight shares free slots between queues (default: SQS_JOBS_QUEUE_URL)',
      collect,
    )
    .option('--concurrency <n>', 'handlers running at once (default 10)')
    .option('--prefetch <n>', 'received-but-unstarted messages held beyond the free slots (default 10)')
    .option('--visibility-timeout <seconds>', 'visibility timeout asked for on every receive (default 30)')
    .option('--wait-time <seconds>', 'long-poll wait, 0-20 (default 20)')
    .option('--shutdown-timeout-ms <ms>', 'how long a stop lets running handlers finish (default 30000)')
    .option('--memcached <[tls://]host:port>', 'memcached for the dedupe lock (default: SQS_JOBS_MEMCACHED)')
    .option('--lock-fail-closed', 'leave jobs queued while memcached is unreachable (default: run them anyway)')
    .option('--table <name>', 'job store table for tracked jobs and fan-out (default: SQS_JOBS_JOB_TABLE)')
    .option('--tiers [pick]', "also serve the first queue's lanes <queue>-high and <queue>-low; pick: strict (default) or weighted")
    .option('--schedules', 'fire the schedules in the job store (of jobs this worker has), send the jobs kept there until their time')
    .addOption(cloudwatchEndpoint())
    .action((flags) => worker(flags, ctx));

  withAws(program.command('enqueue').description('validate and send one job').argument('<job>', 'job name'))
    .option('--jobs <module>', 'module or folder that exports the job (required)')
    .option('--args <json>', 'the job arguments as JSON', '{}')
    .option('--job-id <id>', 'job id (the dedupe key; default: a new one)')
    .option('--tenant <tenant>', 'tenant')
    .option('--delay <seconds>', 'delay, 0-900')
    .option('--queue <url>', 'queue URL (default: SQS_JOBS_QUEUE_URL)')
    .option('--track', 'record its status in the job store (--table or SQS_JOBS_JOB_TABLE); `sqs-jobs job <id>` shows it')
    .option('--table <name>', 'job store table (default: SQS_JOBS_JOB_TABLE)')
    .option('--priority <tier>', "high, normal or low: send it to that tier's lane (from `queues create --tiers`)")
    .action((job: string, flags) => enqueueCommand(job, flags, ctx));

  withAws(
    program
      .command('publish')
      .description("check an event's payload by its schema and publish it to the event's SNS topic")
      .argument('<event>', 'event name'),
  )
    .option('--jobs <module>', 'module or folder that exports the event, or a job that runs on it (required)')
    .option('--payload <json>', 'the payload as JSON', '{}')
    .option('--id <id>', 'event id (default: a new one): publishing it again runs each subscriber once')
    .option('--tenant <tenant>', 'tenant')
    .option('--group-id <group>', "a FIFO event's message group (required for one): its events reach each subscriber in order")
    .option('--attribute <name=value>', "a message attribute for subscriptions' filter policies, repeatable", collect)
    .option('--account <id>', "the topics' account (default: the topic is looked up by name)")
    .action((event: string, flags) => publishCommand(event, flags, ctx));

  withAws(program.command('stats').description("queue depths, and per-job rates and timings from the workers' CloudWatch metrics"))
    .option('--queue <url>', 'queue URL, repeatable (default: SQS_JOBS_QUEUE_URL)', collect)
    .option('--jobs <module>', "also each event's subscriber queues: those of the jobs this module exports that run on events")
    .option('--window <minutes>', 'metrics window (default 15)')
    .option('--namespace <namespace>', 'metrics namespace (default: SQS_JOBS_METRICS_NAMESPACE or SqsJobs)')
    .option('--watch', 'redraw until Ctrl-C')
    .option('--every <seconds>', 'with --watch: seconds between redraws (default 5)')
    .option('--json', 'print one JSON document')
    .option('--table <name>', 'the job store, to show what is paused (default: SQS_JOBS_JOB_TABLE)')
    .addOption(cloudwatchEndpoint())
    .action((flags) => stats(flags, ctx));

  const dlq = program.command('dlq').description("list, replay, purge or archive (to S3) a queue's dead-letter queue");
  const dlqCommand = (name: string, description: string) =>
    withAws(dlq.command(name).description(description))
      .option('--queue <url>', 'the queue; its DLQ is found from its redrive policy (default: SQS_JOBS_QUEUE_URL)')
      .option('--dlq <url>', 'the dead-letter queue itself');
  filtered(dlqCommand('list', 'show dead letters (job, id, attempt, reason, error) without consuming them'))
    .option('--limit <n>', 'at most this many (default 100)')
    .option('--json', 'print JSON')
    .action((flags) => dlqList(flags, ctx));
  withReplaySources(filtered(dlqCommand('replay', 'move dead letters back to their queue, each at most once (from S3: --from)')))
    .option('--limit <n>', 'at most this many')
    .option('--dry-run', 'show what would move')
    .option('--json', 'print JSON')
    .action((flags) => dlqReplayCommand(flags, ctx));
  filtered(dlqCommand('purge', 'delete the dead letters (all of them, or those the filter matches, each at most once)'))
    .option('--dry-run', 'count what would be deleted')
    .option('--yes', 'really delete them')
    .option('--json', 'print JSON')
    .action((flags) => dlqPurge(flags, ctx));
  addDlqArchiveCommand(dlqCommand, ctx);

  const store = program.command('store').description('the job store (job status, progress, fan-out): a DynamoDB table');
  withStore(store.command('create').description('create the table if it does not exist: on-demand, TTL on expiresAt (idempotent)')).action(
    (flags) => storeCreate(flags, ctx),
  );
  withStore(
    store
      .command('backfill')
      .description("give every job record its jobs list keys: a scan of the whole table (never changes the table's indexes)"),
  ).action((flags) => storeBackfill(flags, ctx));

  const job = withStore(
    program.command('job').description("a tracked job's status: state, attempt, progress, fan-out children").argument('<job-id>', 'job id'),
  )
    .option('--watch', 'redraw (a live progress bar) until the job completes, fails or is cancelled')
    .option('--every <seconds>', 'with --watch: seconds between reads (default 1)')
    .option('--json', 'print JSON')
    .action((jobId: string, flags) => jobCommand(jobId, flags, ctx));
  withStore(
    job
      .command('cancel')
      .description('cancel a tracked job: not run if it waits, signalled (ctx.signal) if it runs, its fan-out children not yet run too')
      .argument('<job-id>', 'job id'),
  )
    .option('--memcached <[tls://]host:port>', "the workers' memcached, where they read cancels (default: SQS_JOBS_MEMCACHED)")
    .option('--lock-key-prefix <prefix>', "the workers' lockKeyPrefix (default: sqsjobs:)")
    .option('--json', 'print JSON')
    // With globals: `job` takes the store flags too, and commander gives them to it when both do.
    .action((jobId: string, _flags, command: Command) => jobCancelCommand(jobId, command.optsWithGlobals(), ctx));

  withDashboardAuth(
    withAws(
      program
        .command('dashboard')
        .description(
          'serve the web dashboard: queues, job types, tenants, dead letters (filter, replay, purge) and those archived, schedules, pauses, jobs',
        ),
    )
      .option('--port <n>', 'port (default 3000; 0: any free port)')
      .option('--host <address>', 'address to listen on (default 127.0.0.1: this machine only)')
      .option('--queue <url>', 'queue URL, repeatable (default: SQS_JOBS_QUEUE_URL)', collect)
      .option('--read-only', 'show, never act: actions answer 403 and no button shows')
      .option('--sla <seconds>', "alarm when a queue's oldest message is older (where the server publishes SQS metrics)")
      .option('--window <minutes>', 'rates and timings over this many minutes (default 60)')
      .option('--namespace <ns>', 'metrics namespace (default: SQS_JOBS_METRICS_NAMESPACE or SqsJobs)')
      .option('--table <name>', 'job store table, for job lookup (default: SQS_JOBS_JOB_TABLE)')
      .option('--memcached <[tls://]host:port>', "the workers' memcached, for cancel and the tenants page (default: SQS_JOBS_MEMCACHED)")
      .option('--lock-key-prefix <prefix>', "the workers' lockKeyPrefix (default: sqsjobs:)")
      .option('--archive <s3-url>', 'list the dead letters `dlq archive` wrote to this s3://bucket/prefix (read-only)')
      .addOption(s3Endpoint())
      .addOption(cloudwatchEndpoint()),
  ).action((flags) => dashboardCommand(flags, ctx));

  configureTree(program, io);
  return program;
}

/** Errors with an exit status of their own (every other error exits 1, a usage error 2). */
export const EXIT_STATUS: Partial<Record<ErrorCode, number>> = {
  JOB_NOT_FOUND: 3,
  SCHEDULE_NOT_FOUND: 3,
  STORE_UNREACHABLE: 4,
  LOCK_UNREACHABLE: 4,
  JOB_ENDED: 5,
};

/** Run the command line; resolves to the exit code. */
export async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const status = { code: 0 };
  const program = buildProgram({ ...io, status });
  if (argv.length === 0) {
    program.outputHelp();
    return 0;
  }
  let acting: Command = program;
  program.hook('preAction', (_program, command) => {
    acting = command;
  });
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return status.code;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    if (error instanceof UsageError) {
      const path = pathOf(acting);
      io.err(`${path}: ${error.message}\n(run "${path} --help" for usage)\n`);
      return 2;
    }
    if (error instanceof SqsJobsError) {
      io.err(`sqs-jobs: ${error.code}: ${error.message}\n`);
      return EXIT_STATUS[error.code] ?? 1;
    }
    io.err(`sqs-jobs: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    return 1;
  }
}
