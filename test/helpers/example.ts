import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { npmInstall } from './pack.js';
import { LOCAL_DYNAMODB, LOCAL_ENV } from './stack.js';

const run = promisify(execFile);

/** A fresh copy of `examples/<name>` under `dir` (one per call: a retried test starts clean), installed as its README says, with the packed package. */
export async function installExample(name: string, dir: string, tarball: string): Promise<string> {
  const app = join(mkdtempSync(join(dir, `${name}-`)), name);
  cpSync(join(process.cwd(), 'examples', name), app, { recursive: true });
  await npmInstall(app, [tarball]); // and what its package.json lists
  return app;
}

/** `npm run typecheck` in an installed example: its JavaScript checked (checkJs) against the packed types. */
export async function typecheckExample(app: string): Promise<void> {
  await run('npm', ['run', '--silent', 'typecheck'], { cwd: app, timeout: 120_000 }).catch((error: { stdout?: string }) => {
    throw new Error(`${app}: npm run typecheck failed:\n${error.stdout ?? String(error)}`);
  });
}

/** An example's long-running script (`npm run <script>`), its output collected; stopped with SIGTERM to its process group. */
export function startScript(app: string, script: string, env: NodeJS.ProcessEnv) {
  const child: ChildProcess = spawn('npm', ['run', '--silent', script], { cwd: app, env, detached: true });
  let output = '';
  for (const stream of [child.stdout!, child.stderr!]) {
    stream.on('data', (d: Buffer) => {
      output += d.toString();
    });
  }
  // 'close': every process holding its output has ended (npm may exit before what runs under it).
  const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
  return {
    output: () => output,
    /** SIGTERM to npm and what runs under it, as a terminal's Ctrl-C or ECS's stop would; resolves once all have ended. */
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGTERM');
      await closed;
    },
  };
}

/**
 * The local stack's environment for an installed example, as `sqs-jobs local env` gives it, with a
 * fresh queue `name` made by the example's own CLI (and with `table`, a job table of that name).
 */
export async function exampleStack(app: string, name: string, table: boolean): Promise<NodeJS.ProcessEnv> {
  const env = {
    ...process.env,
    ...LOCAL_ENV,
    AWS_ENDPOINT_URL_DYNAMODB: LOCAL_DYNAMODB,
    SQS_JOBS_METRICS: 'off',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
  const cli = join(app, 'node_modules/.bin/sqs-jobs');
  const { queueUrl } = JSON.parse((await run(cli, ['queues', 'create', '--name', name, '--json'], { cwd: app, env })).stdout);
  if (table) await run(cli, ['store', 'create', '--table', name], { cwd: app, env });
  return { ...env, SQS_JOBS_QUEUE_URL: queueUrl as string, ...(table ? { SQS_JOBS_JOB_TABLE: name } : {}) };
}

export type Resource = { Type: string; Properties: Record<string, unknown> };

/** `npx cdk synth` in an installed example (offline: no account, no Docker); answers its stack `stack`'s resources of a type. */
export async function synthExample(app: string, stack: string): Promise<(type: string) => Resource[]> {
  const env = { ...process.env, CDK_DISABLE_CLI_TELEMETRY: 'true', CDK_DISABLE_VERSION_CHECK: 'true' };
  await run('npx', ['cdk', 'synth', '--quiet', '--no-notices'], { cwd: app, env, timeout: 300_000 });
  const template = JSON.parse(readFileSync(join(app, `cdk.out/${stack}.template.json`), 'utf8')) as { Resources: Record<string, Resource> };
  const all = Object.values(template.Resources);
  return (type) => all.filter((r) => r.Type === type);
}

/**
 * A job as the example's CLI shows it (`sqs-jobs job <id> --json`); `{ state: 'not found' }` until
 * its first record lands (a producer's `waiting` write may land after the enqueue returns).
 */
export async function jobView(app: string, env: NodeJS.ProcessEnv, jobId: string): Promise<{ state: string } & Record<string, unknown>> {
  const cli = join(app, 'node_modules/.bin/sqs-jobs');
  return run(cli, ['job', jobId, '--json'], { cwd: app, env }).then(
    ({ stdout }) => JSON.parse(stdout) as { state: string },
    () => ({ state: 'not found' }),
  );
}
