import { describe, expect, it } from 'vitest';
import { ageSeconds } from '../../../src/cli/dlq-flags.js';
import { run } from '../../../src/cli/program.js';

async function cli(args: string[]) {
  let out = '';
  let err = '';
  const code = await run(args, {
    out: (t) => (out += t),
    err: (t) => (err += t),
    env: { AWS_ENDPOINT_URL: 'http://127.0.0.1:1', SQS_JOBS_QUEUE_URL: 'http://127.0.0.1:1/000000000000/q' },
    signal: new AbortController().signal,
  });
  return { code, out, err };
}

describe('dlq archive and dlq replay --from on the command line', () => {
  it('reads an age as seconds or whole units (archive and filter alike)', async () => {
    expect(ageSeconds('0', '--older-than')).toBe(0);
    expect(ageSeconds('3600', '--older-than')).toBe(3600);
    expect(ageSeconds('10d', '--older-than')).toBe(864_000);
    expect(ageSeconds('1h30m', '--older-than')).toBe(5400);
    expect(ageSeconds(undefined, '--older-than')).toBeUndefined();
    expect(() => ageSeconds('1.5d', '--newer-than')).toThrow('--newer-than: must be a whole number of seconds, or whole units');
    expect(await cli(['dlq', 'archive', '--older-than', '15d', '--to', 's3://b12/p'])).toMatchObject({
      code: 1,
      err: expect.stringContaining('--older-than: must be at most 14d'),
    });
    // The filter of every dlq command takes units too; its rules still apply (at most 14 days).
    expect(await cli(['dlq', 'list', '--dlq', 'http://127.0.0.1:1/000000000000/q', '--older-than', '15d'])).toMatchObject({
      code: 1,
      err: expect.stringContaining('--older-than: must be <= 1209600 (14 days)'),
    });
    expect(await cli(['dlq', 'purge', '--older-than', '2x', '--dry-run'])).toMatchObject({
      code: 1,
      err: expect.stringContaining("--older-than: must be a whole number of seconds, or whole units of d, h, m, s such as '10d'"),
    });
  });

  it('refuses flags that mean nothing together (a usage error, exit 2, before any call)', async () => {
    for (const [args, said] of [
      [['--from', 's3://b12/p', '--dlq', 'http://127.0.0.1:1/000000000000/q-dlq'], '--from reads the archive, not a DLQ'],
      [['--from', 's3://b12/p', '--archive', 's3://b12/p'], '--from replays from the archive, --archive marks it'],
      [['--kms-key', 'alias/k'], '--kms-key is for an S3 archive: it goes with --from or --archive'],
      [['--s3-endpoint', 'http://127.0.0.1:1'], '--s3-endpoint is for an S3 archive'],
    ] as const)
      expect(await cli(['dlq', 'replay', ...args])).toMatchObject({
        code: 2,
        err: expect.stringContaining(`sqs-jobs dlq replay: ${said}`),
      });
    expect(await cli(['dlq', 'replay', '--archive', 'http://x'])).toMatchObject({
      code: 1,
      err: expect.stringContaining('--archive: must be s3://'),
    });
  });

  it('refuses a missing or malformed flag before any call (CONFIG_INVALID, exit 1)', async () => {
    expect(await cli(['dlq', 'archive', '--to', 's3://b12/p'])).toMatchObject({
      code: 1,
      err: expect.stringContaining('--older-than <age> is required'),
    });
    expect(await cli(['dlq', 'archive', '--older-than', '10d'])).toMatchObject({
      code: 1,
      err: expect.stringContaining('--to s3://bucket/prefix is required'),
    });
    expect(await cli(['dlq', 'archive', '--older-than', '10d', '--to', 'b/p'])).toMatchObject({
      code: 1,
      err: expect.stringContaining('--to: must be s3://'),
    });
    expect(await cli(['dlq', 'replay', '--from', 's3://B/p'])).toMatchObject({
      code: 1,
      err: expect.stringContaining('--from: "B" is not an S3 bucket name'),
    });
    expect(await cli(['dlq', 'replay', '--from', 's3://b12/p', '--older-than', 'x'])).toMatchObject({
      code: 1,
      err: expect.stringContaining('--older-than'),
    });
  });

  it('documents both in --help', async () => {
    const archive = await cli(['dlq', 'archive', '--help']);
    expect(archive.code).toBe(0);
    for (const flag of [
      '--older-than <age>',
      '--to <s3-url>',
      '--kms-key <id>',
      '--s3-endpoint <url>',
      '--queue <url>',
      '--dlq <url>',
      '--dry-run',
    ])
      expect(archive.out).toContain(flag);
    const replay = await cli(['dlq', 'replay', '--help']);
    for (const flag of ['--from <s3-url>', '--archive <s3-url>', '--kms-key <id>', '--s3-endpoint <url>', '--job <name>', '--dry-run'])
      expect(replay.out).toContain(flag);
    expect((await cli(['dlq', '--help'])).out).toMatch(/archive \[options\]\s+write dead letters to S3/);
  });
});
