import type { Command } from 'commander';
import type { CliContext } from './commands.js';
import { withStore } from './flags.js';
import { pauseCommand, pausesCommand, resumeCommand } from './pause-commands.js';

/** `sqs-jobs pause`, `resume` and `pauses`: what is kept from starting, in the job store. */
export function addPauseCommands(program: Command, ctx: CliContext): void {
  const scoped = (command: Command) =>
    withStore(command)
      .option('--queue <name|url>', 'a whole queue: not received from')
      .option('--job <name>', 'a job type (with --tenant: for that tenant only)')
      .option('--tenant <id>', "a tenant's jobs (with --job: of that type only)")
      .option('--memcached <[tls://]host:port>', "the workers' memcached, told at once (default: SQS_JOBS_MEMCACHED)")
      .option('--lock-key-prefix <prefix>', "the workers' lockKeyPrefix (default: sqsjobs:)")
      .option('--json', 'print JSON');
  scoped(
    program.command('pause').description('keep a queue, a job type or a tenant from starting jobs (running ones finish) until resumed'),
  )
    .option('--for <duration>', "resume by itself after this long: '30s', '10m', '1h30m', '2d'")
    .option('--reason <text>', 'why: shown by `pauses`, `stats` and the dashboard')
    .option('--by <who>', 'who pauses (default: user@host)')
    .option('--jobs <module>', "the workers' jobs module: a --job it does not export is refused")
    .action((flags) => pauseCommand(flags, ctx));
  scoped(program.command('resume').description('end a pause: its jobs start again on every worker within about a second')).action((flags) =>
    resumeCommand(flags, ctx),
  );
  scoped(program.command('pauses').description('what is paused: by whom, since and until when, why')).action((flags) =>
    pausesCommand(flags, ctx),
  );
}
