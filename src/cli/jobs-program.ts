import type { Command } from 'commander';
import { DEFAULT_LIST_LIMIT, JOB_STATES, MAX_LIST_LIMIT } from '../ports/job-list.js';
import type { CliContext } from './commands.js';
import { withStore } from './flags.js';
import { jobsList } from './jobs-commands.js';

/** `sqs-jobs jobs list`: tracked jobs in the job store, found by job, state, tenant and time. */
export function addJobsCommands(program: Command, ctx: CliContext): void {
  const jobs = program.command('jobs').description('tracked jobs in the job store, found by job, state, tenant and time');
  withStore(
    jobs
      .command('list')
      .description('one page of tracked jobs (only tracked ones are kept), newest state change first, with the next page’s cursor'),
  )
    .option('--job <name>', 'only this job type')
    .option('--state <state>', `only this state: ${JOB_STATES.join(', ')}`)
    .option('--tenant <id>', "only this tenant's jobs")
    .option('--since <when>', "only jobs whose state changed since: a duration back ('30m', '1h', '2d') or an ISO-8601 time")
    .option('--limit <n>', `rows per page, 1-${MAX_LIST_LIMIT} (default ${DEFAULT_LIST_LIMIT})`)
    .option('--cursor <cursor>', 'the page after the one that printed this cursor')
    .option('--json', 'print JSON: { rows, cursor }')
    .action((flags) => jobsList(flags, ctx));
}
