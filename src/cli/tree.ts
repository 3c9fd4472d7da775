import type { Command } from 'commander';

/** Where the command tree writes. */
interface CliIo {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
}

/** The command's path as typed, e.g. `sqs-jobs dlq list`. */
export function pathOf(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c !== null; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** Every command: output through io, errors that name the command, no process.exit of its own. */
export function configureTree(command: Command, io: CliIo): void {
  const path = pathOf(command);
  command
    .configureOutput({
      writeOut: io.out,
      writeErr: io.err,
      outputError: (text, write) => write(`${path}: ${text.replace(/^error: /, '')}`),
    })
    .showHelpAfterError(`(run "${path} --help" for usage)`)
    .exitOverride();
  for (const sub of command.commands) configureTree(sub, io);
}
