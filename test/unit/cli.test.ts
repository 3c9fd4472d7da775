import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Env } from '../../src/config/env.js';
import { run } from '../../src/cli/program.js';

/**
 * Every command and subcommand of `sqs-jobs`, in-process: its own --help/-h, unknown options named
 * with the command, and every flag and variable fed garbage (CONFIG_INVALID naming the setting and
 * the rule, before any network call). test/integration/cli.test.ts runs the real binary.
 */
async function cli(argv: string[], env: Env = {}) {
  let out = '';
  let err = '';
  const code = await run(argv, {
    out: (t) => {
      out += t;
    },
    err: (t) => {
      err += t;
    },
    env,
    signal: new AbortController().signal,
  });
  return { code, out, err };
}

const COMMANDS = [
  [],
  ['queues'],
  ['queues', 'create'],
  ['worker'],
  ['enqueue'],
  ['stats'],
  ['dlq'],
  ['dlq', 'list'],
  ['dlq', 'replay'],
  ['dlq', 'purge'],
  ['dlq', 'archive'],
];
const LEAVES = COMMANDS.filter((c) => c.length > 0 && c[0] !== 'queues' && c[0] !== 'dlq').concat([
  ['queues', 'create'],
  ['dlq', 'list'],
  ['dlq', 'replay'],
  ['dlq', 'purge'],
  ['dlq', 'archive'],
]);
const name = (command: string[]) => ['sqs-jobs', ...command].join(' ');

describe('sqs-jobs help', () => {
  it.each(
    COMMANDS.flatMap((c) => [
      [...c, '--help'],
      [...c, '-h'],
    ]),
  )('%j prints its own usage to stdout and exits 0', async (...argv) => {
    const r = await cli(argv);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(new RegExp(`^Usage: ${name(argv.slice(0, -1))} `));
    expect(r.err).toBe('');
  });

  it.each(LEAVES)('"help" names the usage of %s; every command takes --endpoint and --region', async (...command) => {
    // `sqs-jobs help worker`, `sqs-jobs dlq help list`
    const r = await cli([...command.slice(0, -1), 'help', command.at(-1)!]);
    expect(r.code).toBe(0);
    expect(r.out).toContain(`Usage: ${name(command)} [options]`);
    expect(r.out).toContain('--endpoint <url>');
    expect(r.out).toContain('--region <region>');
  });

  it('no command prints the overview and the environment, exit 0', async () => {
    const r = await cli([]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^Usage: sqs-jobs /);
    expect(r.out).toContain('AWS_ENDPOINT_URL_CLOUDWATCH');
  });

  it.each([['--version'], ['-V']])('%s prints the package version', async (flag) => {
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    expect(await cli([flag])).toEqual({ code: 0, out: `${version}\n`, err: '' });
  });
});

describe('sqs-jobs usage errors', () => {
  it.each(COMMANDS)('an unknown option on "%s" names itself and the command, exit 2', async (...command) => {
    const r = await cli([...command, '--bogus']);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(new RegExp(`^${name(command)}: unknown option '--bogus'\\n\\(run "${name(command)} --help" for usage\\)`));
    expect(r.out).toBe('');
  });

  it('an unknown command, a stray argument, a missing one', async () => {
    expect((await cli(['wroker'])).err).toMatch(/^sqs-jobs: unknown command 'wroker'/);
    expect((await cli(['dlq', 'show'])).err).toMatch(/^sqs-jobs dlq: unknown command 'show'/);
    expect((await cli(['worker', 'extra', '--jobs', 'handlers'])).err).toMatch(/^sqs-jobs worker: too many arguments/);
    const missing = await cli(['enqueue', '--jobs', 'handlers']);
    expect([missing.code, missing.err]).toEqual([2, expect.stringMatching(/^sqs-jobs enqueue: missing required argument 'job'/)]);
    expect((await cli(['worker', '--concurrency'])).err).toMatch(/^sqs-jobs worker: option '--concurrency <n>' argument missing/);
  });
});

const QUEUE = 'http://127.0.0.1:4566/123456789012/jobs';

/** [command line, environment, setting the message must name, rule it must state] */
type Garbage = [string[], Env, string, RegExp];

const garbage: Garbage[] = [
  // queues create
  [['queues', 'create', '--name', 'q', '--max-receive-count', 'five'], {}, '--max-receive-count', /must be a whole number/],
  [['queues', 'create', '--name', 'q', '--visibility-timeout', '30s'], {}, '--visibility-timeout', /must be a whole number/],
  [['queues', 'create', '--name', 'q', '--endpoint', 'localhost:4566'], {}, '--endpoint', /must be an http\(s\) URL/],
  [['queues', 'create', '--name', 'q', '--region', 'mars'], {}, '--region', /must be an AWS region/],
  [['queues', 'create', '--name', 'q'], { AWS_ENDPOINT_URL: 'localhost:4566' }, 'AWS_ENDPOINT_URL', /must be an http\(s\) URL/],
  [['queues', 'create', '--name', 'q'], { AWS_REGION: 'mars' }, 'AWS_REGION', /must be an AWS region/],
  [['queues', 'create'], {}, '--name', /queues create needs --name/],
  // worker
  [['worker', '--jobs', 'handlers', '--queue', 'jobs'], {}, '--queue', /must be an http\(s\) queue URL/],
  [['worker', '--jobs', 'handlers', '--queue', `${QUEUE}@heavy`], {}, '--queue', /must be a whole number/],
  [['worker', '--jobs', 'handlers', '--queue', `${QUEUE}@0`], {}, '--queue', />= 1/],
  [['worker', '--jobs', 'handlers', '--queue', QUEUE, '--concurrency', 'ten'], {}, '--concurrency', /must be a whole number/],
  [['worker', '--jobs', 'handlers', '--queue', QUEUE, '--concurrency', '0'], {}, '--concurrency', /must be >= 1/],
  [['worker', '--jobs', 'handlers', '--queue', QUEUE, '--prefetch', '-1'], {}, '--prefetch', /must be 0-1000/],
  [['worker', '--jobs', 'handlers', '--queue', QUEUE, '--visibility-timeout', '1'], {}, '--visibility-timeout', /must be >= 2/],
  [['worker', '--jobs', 'handlers', '--queue', QUEUE, '--wait-time', '30'], {}, '--wait-time', /must be 0-20/],
  [['worker', '--jobs', 'handlers', '--queue', QUEUE, '--shutdown-timeout-ms', '-5'], {}, '--shutdown-timeout-ms', /must be >= 0/],
  [['worker', '--jobs', 'handlers', '--queue', QUEUE, '--memcached', 'cache'], {}, '--memcached', /must be host:port/],
  [['worker', '--jobs', 'handlers', '--queue', QUEUE, '--endpoint', 'x'], {}, '--endpoint', /must be an http\(s\) URL/],
  [['worker', '--jobs', 'handlers', '--queue', QUEUE, '--region', 'x'], {}, '--region', /must be an AWS region/],
  [
    ['worker', '--jobs', 'handlers', '--queue', QUEUE, '--cloudwatch-endpoint', 'x'],
    {},
    '--cloudwatch-endpoint',
    /must be an http\(s\) URL/,
  ],
  [['worker', '--jobs', 'no/such/module', '--queue', QUEUE], {}, '--jobs', /does not exist/],
  [
    ['worker', '--jobs', 'handlers', '--queue', QUEUE, '--schedules'],
    {},
    '--schedules',
    /kept in the job store: set --table or SQS_JOBS_JOB_TABLE/,
  ],
  [['worker', '--queue', QUEUE], {}, '--jobs', /worker needs --jobs/],
  ...(
    [
      ['SQS_JOBS_QUEUE_URL', 'jobs', /must be an http\(s\) queue URL/],
      ['SQS_JOBS_ENDPOINT', 'x', /must be an http\(s\) URL/],
      ['AWS_ENDPOINT_URL_SQS', 'x', /must be an http\(s\) URL/],
      ['AWS_ENDPOINT_URL', 'x', /must be an http\(s\) URL/],
      ['AWS_ENDPOINT_URL_CLOUDWATCH', 'x', /must be an http\(s\) URL/],
      ['AWS_REGION', 'x', /must be an AWS region/],
      ['AWS_DEFAULT_REGION', 'x', /must be an AWS region/],
      ['SQS_JOBS_MEMCACHED', 'x', /must be host:port/],
      ['SQS_JOBS_METRICS', 'x', /must be cloudwatch, emf or off/],
      ['SQS_JOBS_METRICS_NAMESPACE', 'AWS/x', /must not start with AWS\//],
      ['SQS_JOBS_LOG_LEVEL', 'x', /must be one of/],
    ] as const
  ).map(
    ([variable, value, rule]): Garbage => [
      ['worker', '--jobs', 'handlers'],
      { SQS_JOBS_QUEUE_URL: QUEUE, [variable]: value },
      variable,
      rule,
    ],
  ),
  // enqueue
  [['enqueue', 'send-welcome-email', '--jobs', 'handlers', '--queue', 'jobs'], {}, '--queue', /must be an http\(s\) queue URL/],
  [['enqueue', 'send-welcome-email', '--jobs', 'handlers', '--queue', QUEUE, '--delay', 'soon'], {}, '--delay', /must be a whole number/],
  [['enqueue', 'send-welcome-email', '--jobs', 'handlers', '--queue', QUEUE, '--args', '{userId}'], {}, '--args', /is not JSON/],
  [
    ['enqueue', 'send-welcome-email', '--jobs', 'handlers', '--queue', QUEUE, '--endpoint', 'x'],
    {},
    '--endpoint',
    /must be an http\(s\) URL/,
  ],
  [['enqueue', 'send-welcome-email', '--jobs', 'handlers', '--queue', QUEUE, '--region', 'x'], {}, '--region', /must be an AWS region/],
  [
    ['enqueue', 'send-welcome-email', '--jobs', 'handlers'],
    { SQS_JOBS_QUEUE_URL: 'jobs' },
    'SQS_JOBS_QUEUE_URL',
    /must be an http\(s\) queue URL/,
  ],
  [['enqueue', 'send-welcome-email', '--queue', QUEUE], {}, '--jobs', /enqueue needs --jobs/],
  // stats
  [['stats', '--queue', 'jobs'], {}, '--queue', /must be an http\(s\) queue URL/],
  [['stats', '--queue', QUEUE, '--window', '0'], {}, '--window', />= 1/],
  [['stats', '--queue', QUEUE, '--window', 'hour'], {}, '--window', /must be a whole number/],
  [['stats', '--queue', QUEUE, '--watch', '--every', '0'], {}, '--every', />= 1/],
  [['stats', '--queue', QUEUE, '--namespace', 'AWS/SQS'], {}, '--namespace', /must not start with AWS\//],
  [['stats', '--queue', QUEUE, '--endpoint', 'x'], {}, '--endpoint', /must be an http\(s\) URL/],
  [['stats', '--queue', QUEUE, '--cloudwatch-endpoint', 'x'], {}, '--cloudwatch-endpoint', /must be an http\(s\) URL/],
  [['stats', '--queue', QUEUE, '--region', 'x'], {}, '--region', /must be an AWS region/],
  [['stats'], { SQS_JOBS_QUEUE_URL: 'jobs' }, 'SQS_JOBS_QUEUE_URL', /must be an http\(s\) queue URL/],
  [['stats'], { SQS_JOBS_QUEUE_URL: QUEUE, AWS_ENDPOINT_URL_CLOUDWATCH: 'x' }, 'AWS_ENDPOINT_URL_CLOUDWATCH', /must be an http\(s\) URL/],
  [['stats'], { SQS_JOBS_QUEUE_URL: QUEUE, SQS_JOBS_METRICS_NAMESPACE: 'a b' }, 'SQS_JOBS_METRICS_NAMESPACE', /letters, digits/],
  // dlq
  ...['list', 'replay', 'purge'].flatMap((action): Garbage[] => [
    [['dlq', action, '--queue', 'jobs'], {}, '--queue', /must be an http\(s\) queue URL/],
    [['dlq', action, '--dlq', 'jobs-dlq'], {}, '--dlq', /must be an http\(s\) queue URL/],
    [['dlq', action, '--dlq', QUEUE, '--endpoint', 'x'], {}, '--endpoint', /must be an http\(s\) URL/],
    [['dlq', action, '--dlq', QUEUE, '--region', 'x'], {}, '--region', /must be an AWS region/],
    [['dlq', action], { SQS_JOBS_QUEUE_URL: 'jobs' }, 'SQS_JOBS_QUEUE_URL', /must be an http\(s\) queue URL/],
  ]),
  [['dlq', 'list', '--dlq', QUEUE, '--limit', '0'], {}, '--limit', />= 1/],
  // store, job (nothing listens at the endpoint: the name is refused before any call)
  ...[
    ['store', 'create'],
    ['job', 'j1'],
  ].flatMap((command): Garbage[] => [
    [[...command, '--table', 't1'], { AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:1' }, '--table', /must be a DynamoDB table name: 3-255/],
    [
      command,
      { AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:1', SQS_JOBS_JOB_TABLE: 'a/b' },
      'SQS_JOBS_JOB_TABLE',
      /must be a DynamoDB table name/,
    ],
  ]),
  [['dlq', 'replay', '--dlq', QUEUE, '--limit', 'all'], {}, '--limit', /must be a whole number/],
  // dlq archive, dlq replay --from (nothing listens at the endpoint: refused before any call)
  ...(
    [
      [['--queue', 'jobs'], {}, '--queue', /must be an http\(s\) queue URL/],
      [['--dlq', 'jobs-dlq'], {}, '--dlq', /must be an http\(s\) queue URL/],
      [['--dlq', QUEUE, '--endpoint', 'x'], {}, '--endpoint', /must be an http\(s\) URL/],
      [['--dlq', QUEUE, '--s3-endpoint', 'x'], {}, '--s3-endpoint', /must be an http\(s\) URL/],
      [['--dlq', QUEUE], { AWS_ENDPOINT_URL_S3: 'x' }, 'AWS_ENDPOINT_URL_S3', /must be an http\(s\) URL/],
      [['--dlq', QUEUE, '--region', 'x'], {}, '--region', /must be an AWS region/],
      [['--dlq', QUEUE, '--limit', '0'], {}, '--limit', />= 1/],
    ] as const
  ).flatMap(([flags, env, setting, rule]): Garbage[] => {
    const archive: Garbage = [['dlq', 'archive', '--older-than', '10d', '--to', 's3://bucket/dlq', ...flags], env, setting, rule];
    // A replay from the archive reads no DLQ: it takes the rest.
    if (setting === '--dlq') return [archive];
    return [archive, [['dlq', 'replay', '--from', 's3://bucket/dlq', ...flags.slice(flags[0] === '--dlq' ? 2 : 0)], env, setting, rule]];
  }),
  [['dlq', 'archive', '--dlq', QUEUE, '--to', 's3://bucket/dlq', '--older-than', '15d'], {}, '--older-than', /must be at most 14d/],
  [['dlq', 'archive', '--dlq', QUEUE, '--to', 's3://bucket/dlq', '--older-than', 'old'], {}, '--older-than', /whole units of d, h, m, s/],
  [['dlq', 'archive', '--dlq', QUEUE, '--older-than', '10d'], {}, '--to', /--to s3:\/\/bucket\/prefix is required/],
  [['dlq', 'archive', '--dlq', QUEUE, '--older-than', '10d', '--to', 'bucket/dlq'], {}, '--to', /must be s3:\/\/bucket\/prefix/],
  [['dlq', 'replay', '--from', 's3://My_Bucket/dlq'], {}, '--from', /is not an S3 bucket name/],
];

describe('sqs-jobs dlq purge without --yes', () => {
  it.each([
    [['--dlq', QUEUE], QUEUE],
    [['--queue', QUEUE], `the DLQ of ${QUEUE}`],
  ])('%j is a usage error: names the command and the DLQ, exit 2, before any call', async (flags, target) => {
    // Nothing listens at this endpoint: a call would fail with a connection error instead.
    const r = await cli(['dlq', 'purge', ...flags, '--endpoint', 'http://127.0.0.1:1']);
    expect(r.code).toBe(2);
    expect(r.err).toBe(
      `sqs-jobs dlq purge: purge deletes every message in ${target}: add --yes to do it (or --dry-run to count them)\n(run "sqs-jobs dlq purge --help" for usage)\n`,
    );
    expect(r.out).toBe('');
  });
});

describe('sqs-jobs with garbage', () => {
  it.each(garbage)('%j %j: CONFIG_INVALID naming %s', async (argv, env, setting, rule) => {
    const r = await cli(argv, env);
    expect(r.code, r.err).toBe(1);
    expect(r.err).toMatch(/^sqs-jobs: CONFIG_INVALID: /);
    expect(r.err).toContain(setting);
    expect(r.err).toMatch(rule);
    expect(r.err).not.toMatch(/TypeError|ZodError|\n\s+at /);
    expect(r.err.trim().split('\n')).toHaveLength(1);
  });
});
