import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { ConfigError } from '../core/errors.js';
import type { Env } from '../config/env.js';
import { type CliContext, UsageError } from './commands.js';

/**
 * `sqs-jobs local up|down|status|env`: the local stack for an app, without a clone of this repo.
 * The package ships infra/local's scripts (LocalStack or moto for SQS, CloudWatch and SNS;
 * memcached; DynamoDB Local for the job store, all on 127.0.0.1); this runs them with their state,
 * logs and Python environments in the app's `.sqs-jobs/` folder.
 */
export function addLocalCommand(program: Command, ctx: CliContext): void {
  const local = program
    .command('local')
    .description('the local stack for your app on 127.0.0.1: LocalStack or moto, memcached, DynamoDB Local (state in ./.sqs-jobs)');
  local
    .command('up')
    .description('install what is missing and start what is not running (the SQS server: localstack, the default, or moto)')
    .argument('[server]', 'localstack or moto')
    .action((server: string | undefined) => localUp(server, ctx));
  local
    .command('down')
    .description('stop what `local up` started')
    .action(() => {
      const env = scriptEnv(ctx.env);
      // Both servers: the script stops only what it started (by its pid files), whichever up chose.
      const code = Math.max(script('stack.sh', ['down', 'localstack', 'moto', 'memcached'], env), script('dynamodb.sh', ['down'], env));
      if (code !== 0) throw new ConfigError(`local down: stopping failed (exit ${code}); see the lines above`);
    });
  local
    .command('status')
    .description('what answers; exits 1 when something does not')
    .action(() => {
      const env = scriptEnv(ctx.env);
      const code = Math.max(script('stack.sh', ['status', chosenStack(env), 'memcached'], env), script('dynamodb.sh', ['status'], env));
      if (code !== 0 && ctx.status !== undefined) ctx.status.code = 1;
    });
  local
    .command('env')
    .description('print the variables that point sqs-jobs (and the AWS SDKs) at it: eval "$(npx sqs-jobs local env)"')
    .argument('[server]', 'localstack or moto (default: the one `local up` started)')
    .action((server: string | undefined) => {
      const env = scriptEnv(ctx.env);
      if (server !== undefined && !(SERVERS as readonly string[]).includes(server))
        throw new UsageError(`local env: the server is localstack or moto (got '${server}')`);
      ctx.out(capture('stack.sh', ['env', server ?? chosenStack(env)], env).trimEnd());
      ctx.out(capture('dynamodb.sh', ['env'], env).trimEnd());
    });
}

const SERVERS = ['localstack', 'moto'] as const;

function localUp(server: string | undefined, ctx: CliContext): void {
  const stack = server ?? 'localstack';
  if (!(SERVERS as readonly string[]).includes(stack)) throw new UsageError(`local up: the server is localstack or moto (got '${stack}')`);
  const env = scriptEnv(ctx.env);
  mkdirSync(env.SQS_JOBS_STATE_DIR!, { recursive: true });
  const code = script('stack.sh', ['up', stack, 'memcached'], env);
  // Remembered once it answers: `env` and `status` speak of it (`down` stops whatever was started).
  if (code === 0) writeFileSync(join(env.SQS_JOBS_STATE_DIR!, 'stack'), `${stack}\n`);
  if (code === 3) {
    throw new ConfigError(
      'local up: LocalStack needs Python >= 3.13 (on PATH or under pyenv), which this machine does not have: `sqs-jobs local up moto` runs moto instead',
    );
  }
  if (code !== 0) throw new ConfigError(`local up: starting ${stack} or memcached failed (exit ${code}); see the lines above`);
  if (script('dynamodb.sh', ['up'], env) !== 0) throw new ConfigError('local up: starting DynamoDB Local failed; see the lines above');
  ctx.out('the local stack is up: eval "$(npx sqs-jobs local env)" points your app at it; `npx sqs-jobs local down` stops it');
}

/** The SQS server `local up` chose (default localstack). */
function chosenStack(env: NodeJS.ProcessEnv): string {
  const file = join(env.SQS_JOBS_STATE_DIR!, 'stack');
  const chosen = existsSync(file) ? readFileSync(file, 'utf8').trim() : '';
  return (SERVERS as readonly string[]).includes(chosen) ? chosen : 'localstack';
}

/**
 * The environment the scripts run with: the CLI's, with their state, logs and Python environments
 * in the app's `.sqs-jobs/` folder (beside its package.json; SQS_JOBS_STATE_DIR overrides it; the ports are the scripts' own
 * variables, SQS_JOBS_LOCALSTACK_PORT, SQS_JOBS_MOTO_PORT, SQS_JOBS_MEMCACHED_PORT, SQS_JOBS_DYNAMODB_PORT).
 */
function scriptEnv(cli: Env): NodeJS.ProcessEnv {
  const state = resolve(cli.SQS_JOBS_STATE_DIR ?? join(appRoot(), '.sqs-jobs'));
  return {
    ...cli,
    SQS_JOBS_STATE_DIR: state,
    SQS_JOBS_LOCALSTACK_VENV: cli.SQS_JOBS_LOCALSTACK_VENV ?? join(state, 'venv-localstack'),
    SQS_JOBS_MOTO_VENV: cli.SQS_JOBS_MOTO_VENV ?? join(state, 'venv-moto'),
    SQS_JOBS_ENV_COMMAND: 'npx sqs-jobs local env',
  };
}

/** Run one of the shipped scripts, its output on the terminal; its exit code. */
function script(name: string, args: readonly string[], env: NodeJS.ProcessEnv): number {
  const out = spawnSync('bash', [join(scriptsDir(), name), ...args], { stdio: 'inherit', env });
  if (out.error !== undefined) throw new ConfigError(`local: cannot run bash: ${out.error.message}`);
  return out.status ?? 1;
}

/** What one of the shipped scripts prints (its messages go to the terminal). */
function capture(name: string, args: readonly string[], env: NodeJS.ProcessEnv): string {
  const out = spawnSync('bash', [join(scriptsDir(), name), ...args], { stdio: ['ignore', 'pipe', 'inherit'], env, encoding: 'utf8' });
  if (out.status !== 0) throw new ConfigError(`local: ${name} ${args.join(' ')} failed (exit ${out.status})`);
  return out.stdout;
}

/** The app: the nearest folder up from here with a package.json (else the current one), so `local` works from its subfolders too. */
function appRoot(): string {
  for (let dir = process.cwd(); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) return process.cwd();
  }
}

/** infra/local in the package (dist/src/cli installed, src/cli in the repo): the first one up from here. */
function scriptsDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++, dir = dirname(dir)) {
    const candidate = join(dir, 'infra', 'local');
    if (existsSync(join(candidate, 'stack.sh'))) return candidate;
  }
  throw new ConfigError('local: the package has no infra/local scripts (a broken install?)');
}
