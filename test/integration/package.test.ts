import { execFile, execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installExample, typecheckExample } from '../helpers/example.js';
import { npmInstall, packTarball } from '../helpers/pack.js';
import { LOCAL_ENV, LOCAL_STACK, drain, eventually, freshQueues, sqsClient } from '../helpers/stack.js';

/*
 * The package as a user gets it: what `npm pack` puts in (and keeps out), and an app that installs
 * it with its own zod: ESM import and CommonJS require, one zod, and the CLI loading the app's jobs
 * written in TypeScript. Once, on LocalStack.
 */

const run = promisify(execFile);
const tmp = mkdtempSync(join(tmpdir(), 'sqs-jobs-package-'));
const app = join(tmp, 'app');
let tarball: string;
const sqs = sqsClient();
afterAll(() => {
  sqs.destroy();
  rmSync(tmp, { recursive: true, force: true });
});
const node = (args: string[], cwd = app) =>
  run('node', args, { cwd, env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' } });

/**
 * On the other Nodes' legs of npm test (scripts/test.sh), what does not turn on the Node is left to
 * the full leg: the examples (their own installs) and `local up` (a Python venv).
 */
const PARTIAL_LEG = process.env.SQS_JOBS_TEST_LEG === 'partial';

/** Debian's Node (20 on these machines) when it is older than the package supports, else undefined. */
const SYSTEM_NODE = (() => {
  if (!existsSync('/usr/bin/node')) return undefined;
  const version = execFileSync('/usr/bin/node', ['-p', 'process.versions.node'], { encoding: 'utf8' }).trim();
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major < 22 || (major === 22 && minor < 12) ? version : undefined;
})();

const TOP_FILES = ['package.json', 'README.md', 'CHANGELOG.md', 'LICENSE'];

/** Every file under `dir`, relative to it. */
function filesIn(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)));
}

describe.skipIf(LOCAL_STACK !== 'localstack')('the package, from npm pack', () => {
  beforeAll(async () => {
    tarball = await packTarball(tmp);
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'an-app', version: '1.0.0', private: true, type: 'module' }));
    await npmInstall(app, [tarball, 'zod@^4']);
    mkdirSync(join(app, 'src'), { recursive: true });
    writeFileSync(
      join(app, 'src/jobs.ts'),
      [
        "import { defineJob } from 'sqs-jobs';",
        "import { z } from 'zod';",
        'interface Greeting { readonly n: number }',
        "export const greet = defineJob({ name: 'greet', args: z.object({ n: z.number() }), handle: (_g: Greeting) => {} });",
        '',
      ].join('\n'),
    );
  }, 300_000);

  it('holds the built package, its types, source maps with their sources, the local stack scripts, README, CHANGELOG and LICENSE; no tests, benches or TypeScript sources', async () => {
    const unpacked = mkdtempSync(join(tmp, 'unpacked-'));
    await run('tar', ['-xzf', tarball, '-C', unpacked]);
    const files = filesIn(join(unpacked, 'package'));
    for (const entry of ['', 'adapters/', 'http/', 'testing/', 'cdk/']) {
      expect(files).toContain(`dist/src/${entry}index.js`);
      expect(files).toContain(`dist/src/${entry}index.d.ts`);
    }
    expect(files).toEqual(expect.arrayContaining(['dist/src/cli/main.js', ...TOP_FILES]));
    expect(files).toEqual(expect.arrayContaining(['infra/local/stack.sh', 'infra/local/dynamodb.sh', 'infra/local/dynamodb/pom.xml']));
    const other = (f: string) => !f.startsWith('dist/src/') && !f.startsWith('infra/local/') && !TOP_FILES.includes(f);
    expect(files.filter(other)).toEqual([]);
    expect(files.filter((f) => /\.[cm]?ts$/.test(f) && !/\.d\.[cm]?ts$/.test(f))).toEqual([]);
    const maps = files.filter((f) => f.endsWith('.js.map'));
    expect(maps.length).toBeGreaterThan(50);
    for (const f of maps) {
      const map = JSON.parse(readFileSync(join(unpacked, 'package', f), 'utf8')) as {
        sources: string[];
        sourcesContent?: (string | null)[];
      };
      expect(map.sourcesContent?.length, f).toBe(map.sources.length);
      expect(
        map.sourcesContent!.every((c) => typeof c === 'string' && c.length > 0),
        f,
      ).toBe(true);
    }
    const manifest = JSON.parse(readFileSync(join(unpacked, 'package/package.json'), 'utf8'));
    expect(manifest.peerDependencies.zod).toBe('^4.0.0');
    expect(manifest.dependencies.zod).toBeUndefined();
    expect(manifest.engines.node).toBe('>=22.12');
    // Only what an app's install reads: no scripts (npm would warn of `prepare`), no devDependencies.
    expect(manifest.scripts).toBeUndefined();
    expect(manifest.devDependencies).toBeUndefined();
  });

  it("an app imports it (ESM) and requires it (CommonJS) and shares the app's one zod", async () => {
    const check = "const s = m.defineJob({ name: 'j', args: z.object({ n: z.number() }), handle: () => {} }); console.log(s.name)";
    const esm = await node(['--input-type=module', '-e', `import * as m from 'sqs-jobs'; import { z } from 'zod'; ${check}`]);
    expect(esm.stdout.trim()).toBe('j');
    const cjs = await node(['--input-type=commonjs', '-e', `const m = require('sqs-jobs'); const { z } = require('zod'); ${check}`]);
    expect(cjs.stdout.trim()).toBe('j');
    for (const entry of ['sqs-jobs/adapters', 'sqs-jobs/http', 'sqs-jobs/testing', 'sqs-jobs/lambda']) {
      const out = await node(['--input-type=commonjs', '-e', `console.log(Object.keys(require('${entry}')).length > 0)`]);
      expect(out.stdout.trim(), entry).toBe('true');
    }
    const zods = (await run('npm', ['ls', 'zod', '--all', '--parseable'], { cwd: app })).stdout.trim().split('\n');
    expect(zods).toHaveLength(1);
    // aws-cdk-lib is an optional peer: this app has none, every other entry loads, and the CDK
    // entry says what is missing.
    expect(existsSync(join(app, 'node_modules/aws-cdk-lib'))).toBe(false);
    const cdk = await node(['--input-type=module', '-e', "await import('sqs-jobs/cdk')"]).then(
      () => '',
      (error: { stderr: string }) => error.stderr,
    );
    expect(cdk).toMatch(/Cannot find (package|module) 'aws-cdk-lib'/);
  });

  it('the CLI loads jobs written in TypeScript through the app’s tsx (or Node’s own type stripping), and otherwise says how to', async () => {
    const { queueUrl } = await freshQueues(sqs, 'pkg-ts');
    const env = { ...process.env, ...LOCAL_ENV, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
    const cli = join(app, 'node_modules/.bin/sqs-jobs');
    const enqueue = () =>
      run(cli, ['enqueue', 'greet', '--jobs', 'src/jobs.ts', '--args', '{"n":1}', '--queue', queueUrl], { cwd: app, env });
    if ((process.features as { typescript?: unknown }).typescript) {
      await enqueue(); // this Node strips types itself
    } else {
      const refused = await enqueue().then(
        () => undefined,
        (error: { stderr: string; code: number }) => error,
      );
      expect(refused?.code).toBe(1);
      expect(refused?.stderr).toMatch(/src\/jobs\.ts is TypeScript, and Node v\d+\.\d+\.\d+ cannot load it by itself/);
      expect(refused?.stderr).toMatch(/npm i -D tsx/);
      expect(refused?.stderr).not.toMatch(/\n\s+at /); // an answer, not a stack trace
    }
    await npmInstall(app, ['tsx'], true);
    await enqueue();
    const sent = (await drain(sqs, queueUrl)).map((m) => JSON.parse(m.Body!));
    expect(sent.map((b) => [b.job, b.args])).toEqual(
      (process.features as { typescript?: unknown }).typescript
        ? [
            ['greet', { n: 1 }],
            ['greet', { n: 1 }],
          ]
        : [['greet', { n: 1 }]],
    );
  });

  it.skipIf(PARTIAL_LEG)(
    '`sqs-jobs local up moto` starts a local stack for the app (state in its .sqs-jobs/), `local env` points the app at it, `local down` stops it',
    async () => {
      // Ports of its own, beside the suite's servers.
      const env = {
        ...process.env,
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        SQS_JOBS_MOTO_PORT: '4767',
        SQS_JOBS_MEMCACHED_PORT: '11411',
        SQS_JOBS_DYNAMODB_PORT: '4869',
      };
      const sh = (script: string) => run('bash', ['-c', script], { cwd: app, env, timeout: 600_000 });
      try {
        await sh('npx sqs-jobs local up moto');
        expect(existsSync(join(app, '.sqs-jobs/venv-moto/bin/moto_server'))).toBe(true);
        const printed = (await sh('npx sqs-jobs local env')).stdout;
        expect(printed).toMatch(/^export AWS_ENDPOINT_URL=http:\/\/127\.0\.0\.1:4767$/m);
        expect(printed).toMatch(/^export SQS_JOBS_MEMCACHED=127\.0\.0\.1:11411$/m);
        expect(printed).toMatch(/^export AWS_ENDPOINT_URL_DYNAMODB=http:\/\/127\.0\.0\.1:4869$/m);
        await sh('npx sqs-jobs local status');
        // The app, pointed at it: a queue, the job store, a tracked job from its TypeScript jobs.
        const out = await sh(
          [
            'eval "$(npx sqs-jobs local env)"',
            'url=$(npx sqs-jobs queues create --name app-jobs --json | node -e "process.stdin.on(\'data\', (d) => console.log(JSON.parse(d).queueUrl))")',
            'npx sqs-jobs store create --table app-jobs',
            'npx sqs-jobs enqueue greet --jobs src/jobs.ts --args \'{"n":2}\' --queue "$url" --track --table app-jobs --job-id greet-1',
            'npx sqs-jobs job greet-1 --table app-jobs --json',
          ].join(' && '),
        );
        expect(JSON.parse(out.stdout.trim().split('\n').at(-1)!)).toMatchObject({ jobId: 'greet-1', jobName: 'greet', state: 'waiting' });
      } finally {
        await sh('npx sqs-jobs local down');
      }
      const after = await sh('npx sqs-jobs local status').then(
        () => 0,
        (error: { code: number }) => error.code,
      );
      expect(after).toBe(1);
    },
    900_000,
  );

  it("the README's Quick start runs as written: its jobs module and its service-and-worker code, against the local servers", async () => {
    const readme = readFileSync(join(process.cwd(), 'README.md'), 'utf8');
    const start = readme.slice(readme.indexOf('## Quick start'), readme.indexOf('## Run it locally'));
    const blocks = [...start.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
    expect(blocks).toHaveLength(2);
    writeFileSync(join(app, 'jobs.ts'), blocks[0]!);
    writeFileSync(join(app, 'main.ts'), blocks[1]!);
    await npmInstall(app, ['tsx'], true); // as the README says: an ES module app, run with tsx
    const { queueUrl } = await freshQueues(sqs, 'pkg-readme');
    const child = spawn(join(app, 'node_modules/.bin/tsx'), ['main.ts'], {
      cwd: app,
      env: {
        ...process.env,
        ...LOCAL_ENV,
        SQS_JOBS_QUEUE_URL: queueUrl,
        SQS_JOBS_METRICS: 'off',
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
      },
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => {
      output += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      output += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    try {
      await eventually(() => /"msg":"resizing"/.test(output) && /"width":640/.test(output), 'the job to run', 30_000);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0); // stopped cleanly on SIGTERM, as the comment says
    expect(output).not.toMatch(/Error/);
  });

  it("the Quick start's errors from a TypeScript jobs file, through the CLI (the app's tsx, and this Node's own type stripping where it has it): UnrecoverableError dead-letters after one run, RetryLaterError's delay holds, a batch item's UnrecoverableError dead-letters", async () => {
    // The README's jobs.ts as written, and jobs of the test's own beside it, loaded as one module.
    const readme = readFileSync(join(process.cwd(), 'README.md'), 'utf8');
    writeFileSync(join(app, 'jobs.ts'), /```ts\n(\/\/ jobs\.ts[\s\S]*?)```/.exec(readme)![1]!);
    mkdirSync(join(app, 'cli-jobs'), { recursive: true });
    writeFileSync(join(app, 'cli-jobs/index.ts'), ["export * from '../jobs.ts';", ...errorJobs('sqs-jobs')].join('\n'));
    const strips = Boolean((process.features as { typescript?: unknown }).typescript);
    await npmInstall(app, ['tsx'], true);
    for (const loader of strips ? ['tsx', 'Node'] : ['tsx']) {
      if (loader === 'Node') await run('npm', ['uninstall', '--no-audit', '--no-fund', 'tsx'], { cwd: app });
      await expectErrorsHonoured(loader, 'cli-jobs/index.ts', (queueUrl) => [
        join(app, 'node_modules/.bin/sqs-jobs'),
        ['worker', '--jobs', 'cli-jobs/index.ts', '--queue', queueUrl, '--wait-time', '1'],
      ]);
    }
  }, 180_000);

  it('createWorker honours the errors of jobs made by a second copy of the package (a bundle, a monorepo with two installs)', async () => {
    cpSync(join(app, 'node_modules/sqs-jobs'), join(app, 'node_modules/sqs-jobs-copy'), { recursive: true });
    writeFileSync(join(app, 'copy-jobs.mjs'), errorJobs('sqs-jobs-copy').join('\n'));
    writeFileSync(
      join(app, 'copy-worker.mjs'),
      [
        "import { createWorker, UnrecoverableError } from 'sqs-jobs';",
        "import { UnrecoverableError as Theirs } from 'sqs-jobs-copy';",
        "import * as jobs from './copy-jobs.mjs';",
        "if (Theirs === UnrecoverableError) throw new Error('not a second copy');",
        'await createWorker({ jobs: [jobs.resizeImage, jobs.later, jobs.items], waitTimeSeconds: 1, concurrency: 10 }).start();',
      ].join('\n'),
    );
    await expectErrorsHonoured('createWorker', 'copy-jobs.mjs', (queueUrl) => [
      'node',
      ['copy-worker.mjs'],
      { SQS_JOBS_QUEUE_URL: queueUrl },
    ]);
  }, 120_000);

  it.skipIf(SYSTEM_NODE === undefined)(
    'on an older Node (Debian’s /usr/bin/node) the CLI works and says once, on stderr, that it needs Node 22.12, after any error line',
    async () => {
      const cli = join(app, 'node_modules/sqs-jobs/dist/src/cli/main.js');
      const notice = `sqs-jobs: notice: Node ${SYSTEM_NODE} is not supported: sqs-jobs needs Node >= 22.12 (AWS SDK releases after the first week of January 2027 need Node >= 22); run it on Node 22, 24 or 26\n`;
      const env = { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: undefined, SQS_JOBS_QUEUE_URL: undefined };
      const ok = await run('/usr/bin/node', [cli, '--version'], { cwd: app, env });
      expect(ok.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
      expect(ok.stderr).toBe(notice);
      const failed = await run('/usr/bin/node', [cli, 'enqueue', 'greet', '--jobs', 'src/jobs.ts', '--args', '{"n":1}'], {
        cwd: app,
        env,
      }).then(
        () => undefined,
        (error: { stderr: string; code: number }) => error,
      );
      expect(failed?.code).toBe(1);
      const lines = failed!.stderr.split('\n');
      expect(lines[0]).toMatch(/^sqs-jobs: CONFIG_INVALID: /);
      expect(failed!.stderr.endsWith(notice)).toBe(true);
      expect(failed!.stderr.split('notice:')).toHaveLength(2); // once
    },
  );

  it.skipIf(PARTIAL_LEG)(
    'examples/testing-a-job, installed as its README says: it type-checks, and its tests pass with no server',
    async () => {
      const example = await installExample('testing-a-job', tmp, tarball);
      await typecheckExample(example);
      // TAP, whatever this Node's default reporter (Node 26 prints its spec reporter even when piped).
      const { stdout } = await node(['--test', '--test-reporter=tap'], example);
      expect(stdout).toMatch(/^# pass 4$/m);
      expect(stdout).toMatch(/^# fail 0$/m);
    },
  );
});

/**
 * Jobs that throw sqs-jobs' errors, imported from `from` (ES module source): `resize-image` as the
 * README's (UnrecoverableError for a key outside uploads/), `later` (RetryLaterError(3000) on its
 * first attempt), `items` (a batch job that reports its item failed with an UnrecoverableError).
 */
function errorJobs(from: string): string[] {
  return [
    "import { z } from 'zod';",
    `import { defineBatchJob, defineJob, RetryLaterError, UnrecoverableError } from '${from}';`,
    ...(from === 'sqs-jobs'
      ? []
      : [
          "export const resizeImage = defineJob({ name: 'resize-image', args: z.object({ imageKey: z.string(), width: z.number() }),",
          "  handle(args) { if (!args.imageKey.startsWith('uploads/')) throw new UnrecoverableError('not an upload: ' + args.imageKey); } });",
        ]),
    "export const later = defineJob({ name: 'later', args: z.object({}), handle(_args, ctx) {",
    "  ctx.log.info({ attempt: ctx.attempt, at: Date.now() }, 'later ran');",
    '  if (ctx.attempt === 1) throw new RetryLaterError(3000);',
    '} });',
    "export const items = defineBatchJob({ name: 'items', args: z.object({ n: z.number() }), maxSize: 1, maxWaitMs: 0,",
    "  handle: (batch) => ({ failed: batch.map((item) => ({ jobId: item.jobId, error: new UnrecoverableError('never') })) }) });",
    '',
  ];
}

/**
 * Start the worker `start` gives for a fresh queue, enqueue errorJobs' three jobs from `jobs`
 * (through the CLI, as the README's "Run it locally" does), then stop it with SIGTERM: `resize-image` and
 * `items` are dead-lettered as unrecoverable after one receive; `later` runs twice, 3 s apart.
 */
async function expectErrorsHonoured(
  what: string,
  jobs: string,
  start: (queueUrl: string) => [string, string[], Record<string, string>?],
): Promise<void> {
  const env = { ...process.env, ...LOCAL_ENV, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
  const { queueUrl, dlqUrl } = await freshQueues(sqs, 'pkg-errors', { maxReceiveCount: 4 });
  const [command, args, extra] = start(queueUrl);
  const worker = spawn(command, args, { cwd: app, env: { ...env, SQS_JOBS_METRICS: 'off', ...extra } });
  let output = '';
  worker.stdout.on('data', (d: Buffer) => {
    output += d.toString();
  });
  worker.stderr.on('data', (d: Buffer) => {
    output += d.toString();
  });
  const exited = new Promise<number | null>((resolve) => worker.on('exit', resolve));
  const dead: { job: string; reason: string; receives: string }[] = [];
  const cli = join(app, 'node_modules/.bin/sqs-jobs');
  try {
    for (const [job, json] of [
      ['resize-image', '{"imageKey":"cat.png","width":640}'],
      ['later', '{}'],
      ['items', '{"n":1}'],
    ] as const)
      await run(cli, ['enqueue', job, '--jobs', jobs, '--args', json, '--queue', queueUrl], { cwd: app, env });
    await eventually(
      async () => {
        for (const m of await drain(sqs, dlqUrl)) {
          const a = m.MessageAttributes ?? {};
          dead.push({
            job: JSON.parse(m.Body!).job,
            reason: a['sqsjobs-dlq-reason']?.StringValue ?? '',
            receives: a['sqsjobs-dlq-receive-count']?.StringValue ?? '',
          });
        }
        return dead.length >= 2 && (output.match(/"msg":"later ran"/g)?.length ?? 0) >= 2;
      },
      `two dead letters and two runs of later (${what})`,
      30_000,
    );
  } finally {
    worker.kill('SIGTERM');
  }
  expect(await exited, output).toBe(0);
  expect(
    dead.sort((a, b) => a.job.localeCompare(b.job)),
    what,
  ).toEqual([
    { job: 'items', reason: 'unrecoverable', receives: '1' },
    { job: 'resize-image', reason: 'unrecoverable', receives: '1' },
  ]);
  const runs = output
    .split('\n')
    .filter((l) => l.includes('"msg":"later ran"'))
    .map((l) => JSON.parse(l) as { attempt: number; at: number });
  expect(runs.map((r) => r.attempt)).toEqual([1, 2]);
  // RetryLaterError(3000), not the default backoff's 1 s.
  expect(runs[1]!.at - runs[0]!.at, what).toBeGreaterThanOrEqual(2900);
}
