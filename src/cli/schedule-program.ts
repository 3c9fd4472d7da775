import type { Command } from 'commander';
import type { CliContext } from './commands.js';
import { withStore } from './flags.js';
import { schedulesList, schedulesShow, schedulesSteer, schedulesSync } from './schedule-commands.js';

/** `sqs-jobs schedules …`: put an app's declared schedules in the job store, and read and steer them. */
export function addScheduleCommands(program: Command, ctx: CliContext): void {
  const schedules = program
    .command('schedules')
    .description('schedules kept in the job store: put those a module declares, list, show, pause, resume, trigger, remove');
  const command = (name: string, description: string) =>
    withStore(schedules.command(name).description(description)).option('--json', 'print JSON');
  command(
    'sync',
    "put the schedules a module exports (defineSchedule) in the job store, printing what changed; removes the app's schedules the module no longer declares (never another app's, never ones made at run time)",
  )
    .option('--jobs <module>', 'module or folder (its index) that exports the schedules (required)')
    .option('--app <name>', 'the app the schedules are declared by: its schedules are the ones sync may remove (required)')
    .option('--queue <url>', 'where their jobs are sent (default: SQS_JOBS_QUEUE_URL)')
    .option('--dry-run', 'say what would change, change nothing')
    .option('--allow-empty', "the module may declare no schedule: then every one of the app's is removed")
    .action((flags) => schedulesSync(flags, ctx));
  command('list', 'every schedule: id, owner, job, when, next occurrence, last fired, skipped').action((flags) =>
    schedulesList(flags, ctx),
  );
  command('show', 'one schedule: its rules, next occurrences and last fired job')
    .argument('<id>', 'schedule id')
    .action((id: string, flags) => schedulesShow(id, flags, ctx));
  const steer = (name: 'pause' | 'resume' | 'trigger' | 'remove', description: string) =>
    command(name, description)
      .argument('<id>', 'schedule id')
      .option('--endpoint <url>', 'SQS endpoint, for trigger (default: SQS_JOBS_ENDPOINT, AWS_ENDPOINT_URL_SQS or AWS_ENDPOINT_URL)')
      .action((id: string, flags) => schedulesSteer(name, id, flags, ctx));
  steer('pause', 'fire nothing until resumed');
  steer('resume', 'fire again from the next occurrence after now (those missed while paused are not caught up)');
  steer('trigger', "send the schedule's job now, as this second's occurrence (its next occurrence stays)");
  steer('remove', 'remove it (a declared one comes back at its app’s next sync)');
}
