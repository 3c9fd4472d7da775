import type { Command } from 'commander';
import { type CliContext, queuesCreate } from './commands.js';
import { eventsCreate } from './event-commands.js';
import { withAws } from './flags.js';

/** `sqs-jobs queues create` and `sqs-jobs events create`: what makes the queues, topics and subscriptions. */
export function addProvisionCommands(program: Command, ctx: CliContext): void {
  const queues = program.command('queues').description('create queues');
  withAws(
    queues
      .command('create')
      .description(
        'create a queue and its dead-letter queue <name>-dlq with a redrive policy, or apply the settings given to them, printing what changed (a name ending in .fifo makes FIFO queues)',
      ),
  )
    .option('--name <queue>', 'queue name (required)')
    .option('--max-receive-count <n>', 'receives before SQS moves a message to the DLQ (a new queue: 5; left out: kept)')
    .option('--visibility-timeout <seconds>', "the queue's default visibility timeout (a new queue: 30; left out: kept)")
    .option('--spillover', "also create <name>-spill, tenant fairness's spillover queue (same settings and DLQ)")
    .option('--tiers', 'also create the priority lanes <name>-high and <name>-low (same settings and DLQ)')
    .option('--json', 'print the URLs as JSON')
    .action((flags) => queuesCreate(flags, ctx));

  const events = program.command('events').description('events: SNS topics and the queues of the jobs that run on them');
  withAws(
    events
      .command('create')
      .description(
        "for each job a module exports that runs on an event (defineJob({ on })): the event's SNS topic, the job's queue and DLQ, a queue policy letting only that topic send, and the subscription (raw delivery, the job's filter policy), printing what changed",
      ),
  )
    .option('--jobs <module>', 'module or folder (its index) that exports the jobs (required)')
    .option('--max-receive-count <n>', 'receives before SQS moves a message to the DLQ (a new queue: 5; left out: kept)')
    .option('--visibility-timeout <seconds>', "the queues' default visibility timeout (a new queue: 30; left out: kept)")
    .option('--json', 'print the subscribers and changes as JSON')
    .action((flags) => eventsCreate(flags, ctx));
}
