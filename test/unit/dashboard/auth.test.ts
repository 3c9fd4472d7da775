import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessLines } from '../../../src/cli/dashboard-command.js';
import { auditEntry, writeAudit } from '../../../src/dashboard/audit.js';
import { AuthGate, isLoopbackHost } from '../../../src/dashboard/auth.js';
import { parseAuthFile, resolveAuth } from '../../../src/dashboard/auth-config.js';
import { Dashboard } from '../../../src/dashboard/dashboard.js';
import type { DashboardSettings, DashboardSources } from '../../../src/dashboard/options.js';
import { ALB_ARN, type FakeAlb, startFakeAlb } from '../../helpers/dashboard.js';

const TOKEN = 'tok_4f9a8c7d6e5b4a3c2d1e0f9a';
const OTHER = 'tok_0000000000000000000000';
const dir = mkdtempSync(join(tmpdir(), 'dash-auth-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const req = (headers: Record<string, string> = {}) => new Request('http://127.0.0.1:3000/ops/', { headers });

function gate(env: Record<string, string>, auth?: Parameters<typeof resolveAuth>[0], warn?: (m: string) => void): AuthGate {
  return new AuthGate(resolveAuth(auth, env), warn);
}

/** A logger that keeps its lines. */
function lines(): { kept: { level: string; fields: Record<string, unknown>; message: string }[]; log: DashboardSettings['audit'] } {
  const kept: { level: string; fields: Record<string, unknown>; message: string }[] = [];
  const keep = (level: string) => (fields: object, message: string) =>
    kept.push({ level, fields: fields as Record<string, unknown>, message });
  return { kept, log: { info: keep('info'), warn: keep('warn') } };
}

describe('the dashboard sign-in (AuthGate)', () => {
  const both = gate({}, { users: [{ user: 'alice', password: 'correct horse' }], tokens: [{ token: TOKEN, name: 'deploy-bot' }, OTHER] });

  it('lets the right basic user or bearer token through, naming the user (the token’s own name only)', async () => {
    expect(await both.check(req({ authorization: basic('alice', 'correct horse') }))).toEqual({
      ok: true,
      identity: { user: 'alice', via: 'basic' },
    });
    expect(await both.check(req({ authorization: `bearer ${TOKEN}` }))).toEqual({
      ok: true,
      identity: { user: 'deploy-bot', via: 'bearer' },
    });
    // An unnamed token stays unnamed: no request header names its user.
    const unnamed = req({ authorization: `Bearer ${OTHER}`, 'x-amzn-oidc-identity': 'mallory', 'x-forwarded-user': 'mallory' });
    expect(await both.check(unnamed)).toEqual({ ok: true, identity: { user: undefined, via: 'bearer' } });
  });

  it('answers a missing or wrong credential 401 with the challenge a browser (Basic) or a client (Bearer) answers', async () => {
    const cases: [Record<string, string>, string, string][] = [
      [{}, 'no credential', 'Basic realm="sqs-jobs", charset="UTF-8"'],
      [{ authorization: basic('alice', 'wrong horse') }, 'wrong credential', 'Basic realm="sqs-jobs", charset="UTF-8"'],
      [{ authorization: basic('bob', 'correct horse') }, 'wrong credential', 'Basic realm="sqs-jobs", charset="UTF-8"'],
      [{ authorization: basic('alice', '') }, 'wrong credential', 'Basic realm="sqs-jobs", charset="UTF-8"'],
      [{ authorization: 'Basic bm8tY29sb24=' }, 'wrong credential', 'Basic realm="sqs-jobs", charset="UTF-8"'], // "no-colon"
      [{ authorization: `Bearer ${TOKEN}x` }, 'wrong credential', 'Bearer realm="sqs-jobs", error="invalid_token"'],
      [{ authorization: `Bearer ${TOKEN.slice(0, -1)}` }, 'wrong credential', 'Bearer realm="sqs-jobs", error="invalid_token"'],
      [{ authorization: 'Digest abc' }, 'wrong credential', 'Basic realm="sqs-jobs", charset="UTF-8"'],
    ];
    for (const [headers, reason, challenge] of cases) {
      const verdict = await both.check(req(headers));
      expect(verdict.ok, JSON.stringify(headers)).toBe(false);
      if (verdict.ok) continue;
      expect(verdict.reason).toBe(reason);
      expect(verdict.response.status).toBe(401);
      expect(verdict.response.headers.get('www-authenticate')).toBe(challenge);
      expect(await verdict.response.text()).not.toContain('horse');
    }
    const none = await gate({ SQS_JOBS_DASHBOARD_TOKEN: TOKEN }).check(req());
    expect(none.ok === false && none.response.headers.get('www-authenticate')).toBe('Bearer realm="sqs-jobs"');
  });

  it('with nothing configured lets every request through, naming no one (a header naming a user is not taken)', async () => {
    expect(await gate({}).check(req({ 'x-amzn-oidc-identity': 'mallory' }))).toEqual({
      ok: true,
      identity: { user: undefined, via: undefined },
    });
    expect(gate({}).required).toBe(false);
    expect(gate({}).access).toEqual({ users: 0, tokens: 0, alb: undefined });
  });
});

describe('the trusted ALB’s signed header (x-amzn-oidc-data)', () => {
  let alb: FakeAlb;
  beforeAll(async () => {
    alb = await startFakeAlb();
  });
  afterAll(() => alb.close());
  const now = () => Math.floor(Date.now() / 1000);
  const albGate = (warn?: (m: string) => void, users?: { user: string; password: string }[]) =>
    gate({}, { trustAlb: ALB_ARN, albKeysUrl: alb.keysUrl, ...(users === undefined ? {} : { users }) }, warn);
  const data = (token: string) => req({ 'x-amzn-oidc-data': token });

  it('lets a token the ALB signed through, naming its email, else its sub; `=` padding accepted; the key fetched once', async () => {
    const g = albGate();
    expect(g.required).toBe(true);
    expect(g.access).toEqual({ users: 0, tokens: 0, alb: ALB_ARN });
    const before = alb.served;
    const token = alb.token({ sub: '1234-abcd', email: 'alice@example.com' });
    expect(token).toMatch(/=\.|=$/); // padded, as ALBs send them
    expect(await g.check(data(token))).toEqual({ ok: true, identity: { user: 'alice@example.com', via: 'alb' } });
    expect(await g.check(data(alb.token({ sub: '1234-abcd' })))).toEqual({ ok: true, identity: { user: '1234-abcd', via: 'alb' } });
    // Within the allowed skew (60 s), an expiry just past is still taken.
    expect((await g.check(data(alb.token({ sub: 's' }, { exp: now() - 30 })))).ok).toBe(true);
    expect(alb.served - before).toBe(1);
  });

  it('answers 401 (no Basic prompt) for a missing header, another ALB, an expired, forged, unsigned or malformed token', async () => {
    const warnings: string[] = [];
    const g = albGate((m) => warnings.push(m));
    const claims = { sub: 'x', email: 'alice@example.com' };
    const cases: [Record<string, string>, string][] = [
      [{}, 'no credential'],
      [{ authorization: `Bearer ${TOKEN}` }, 'no credential'],
      [
        { 'x-amzn-oidc-data': alb.token(claims, { signer: ALB_ARN.replace('ops', 'other') }) },
        'wrong credential: signed by another load balancer',
      ],
      [{ 'x-amzn-oidc-data': alb.token(claims, { exp: now() - 120 }) }, 'wrong credential: expired'],
      [{ 'x-amzn-oidc-data': alb.token(claims, { exp: undefined }) }, 'wrong credential: expired'],
      [{ 'x-amzn-oidc-data': alb.token(claims, {}, true) }, 'wrong credential: bad signature'],
      [{ 'x-amzn-oidc-data': alb.token(claims, { alg: 'none' }) }, 'wrong credential: not signed ES256'],
      [{ 'x-amzn-oidc-data': alb.token(claims, { kid: '../../etc' }) }, 'wrong credential: no key id'],
      [{ 'x-amzn-oidc-data': 'not.a-jwt' }, 'wrong credential: not a JWT'],
      [{ 'x-amzn-oidc-data': `${alb.token(claims).split('.').slice(0, 2).join('.')}.` }, 'wrong credential: bad signature'],
    ];
    for (const [headers, reason] of cases) {
      const verdict = await g.check(req(headers));
      expect(verdict.ok === false && [verdict.reason, verdict.response.status], JSON.stringify(headers)).toEqual([reason, 401]);
      expect(verdict.ok === false && verdict.response.headers.get('www-authenticate')).toBeNull();
    }
    // A key the ALB's keys do not hold: refused, said once in the log, not asked for again at once.
    const before = alb.served;
    const unknown = alb.token(claims, { kid: '00000000-0000-0000-0000-000000000000' });
    for (let i = 0; i < 3; i++) {
      const verdict = await g.check(data(unknown));
      expect(verdict.ok === false && verdict.reason).toMatch(
        /^wrong credential: its key 0{8}-.* is not at http:\/\/127\.0\.0\.1:\d+ \(HTTP 404\)$/,
      );
    }
    expect(alb.served - before).toBe(1);
    expect(warnings).toHaveLength(1);
  });

  it('with users too, either passes; a request with neither is asked for the user (Basic)', async () => {
    const g = albGate(undefined, [{ user: 'alice', password: 'correct horse' }]);
    expect(await g.check(req({ authorization: basic('alice', 'correct horse') }))).toEqual({
      ok: true,
      identity: { user: 'alice', via: 'basic' },
    });
    expect((await g.check(data(alb.token({ sub: 'bob' })))).ok).toBe(true);
    const none = await g.check(req());
    expect(none.ok === false && none.response.headers.get('www-authenticate')).toBe('Basic realm="sqs-jobs", charset="UTF-8"');
  });

  it('takes the ARN from the option or SQS_JOBS_DASHBOARD_TRUST_ALB; its keys from AWS by partition and region', () => {
    const gov = 'arn:aws-us-gov:elasticloadbalancing:us-gov-west-1:123456789012:loadbalancer/app/ops/50dc6c495c0c9188';
    expect(resolveAuth(undefined, { SQS_JOBS_DASHBOARD_TRUST_ALB: ALB_ARN }).alb).toEqual({
      signer: ALB_ARN,
      keysUrl: 'https://public-keys.auth.elb.us-east-1.amazonaws.com',
    });
    expect(resolveAuth({ trustAlb: gov }, {}).alb?.keysUrl).toBe(
      'https://s3-us-gov-west-1.amazonaws.com/aws-elb-public-keys-prod-us-gov-west-1',
    );
    expect(
      resolveAuth(undefined, { SQS_JOBS_DASHBOARD_TRUST_ALB: ALB_ARN, SQS_JOBS_DASHBOARD_ALB_KEYS_URL: 'http://127.0.0.1:9/' }).alb,
    ).toEqual({
      signer: ALB_ARN,
      keysUrl: 'http://127.0.0.1:9',
    });
    const cn = ALB_ARN.replace('arn:aws:', 'arn:aws-cn:').replace('us-east-1', 'cn-north-1');
    expect(() => resolveAuth({ trustAlb: cn }, {})).toThrow(
      /options\.auth\.trustAlb: where the ALBs of the partition aws-cn .* set SQS_JOBS_DASHBOARD_ALB_KEYS_URL/,
    );
    expect(() => resolveAuth(undefined, { SQS_JOBS_DASHBOARD_TRUST_ALB: 'x-amzn-oidc-identity' })).toThrow(
      /SQS_JOBS_DASHBOARD_TRUST_ALB: must be an Application Load Balancer ARN/,
    );
    expect(() => resolveAuth({ trustAlb: ALB_ARN, albKeysUrl: 'ftp://x' }, {})).toThrow(
      /options\.auth\.albKeysUrl: must be an http\(s\) URL/,
    );
  });
});

describe('where the credentials come from', () => {
  it('reads an auth file: bearer tokens with an optional name, basic users whose password is the rest of the line, comments', () => {
    const text = `# the dashboard's sign-in\n\nbearer ${TOKEN} release bot\r\nbearer ${OTHER}\nbasic alice correct horse battery\n  BASIC bob s3cret-pass  \n`;
    expect(parseAuthFile(text, 'auth.txt')).toEqual({
      tokens: [
        { token: TOKEN, name: 'release bot' },
        { token: OTHER, name: undefined },
      ],
      users: [
        { user: 'alice', password: 'correct horse battery' },
        { user: 'bob', password: 's3cret-pass' },
      ],
    });
  });

  it('refuses a bad line, a short token or password, naming the line and never the secret', () => {
    const bad: [string, RegExp][] = [
      ['basic alice', /auth\.txt line 1: must be `bearer <token> \[<name>\]` or `basic <user> <password>`/],
      ['token abc', /line 1: must be/],
      ['\nbearer short-secret', /auth\.txt line 2: must be 16 or more of .* \(got 12 characters\)/],
      ['basic alice hunter2', /line 1: the password of alice must be 8 or more printable characters \(got 7\)/],
      ['basic a:b longenough', /line 1: the user must be 1-128 printable characters without ':'/],
    ];
    for (const [text, message] of bad) {
      expect(() => parseAuthFile(text, 'auth.txt'), text).toThrow(message);
      try {
        parseAuthFile(text, 'auth.txt');
      } catch (error) {
        for (const secret of ['short-secret', 'hunter2', 'longenough']) expect((error as Error).message).not.toContain(secret);
      }
    }
  });

  it('takes each field of the option, else its variable; every source adds; a file others may read is noted', () => {
    const file = join(dir, 'auth');
    writeFileSync(file, `basic carol file-password\n`);
    chmodSync(file, 0o644);
    const env = {
      SQS_JOBS_DASHBOARD_AUTH_FILE: file,
      SQS_JOBS_DASHBOARD_TOKEN: ` ${TOKEN} , ${OTHER} `,
      SQS_JOBS_DASHBOARD_USERS: 'alice:pass:with:colons,bob:another-pass',
    };
    const all = resolveAuth(undefined, env);
    expect(all.tokens.map((t) => t.token)).toEqual([TOKEN, OTHER]);
    expect(all.users).toEqual([
      { user: 'carol', password: 'file-password' },
      { user: 'alice', password: 'pass:with:colons' },
      { user: 'bob', password: 'another-pass' },
    ]);
    expect(all.notes).toEqual([`the auth file ${file} can be read by others than its owner: chmod 600 it`]);
    chmodSync(file, 0o600);
    const option = resolveAuth({ tokens: [{ token: OTHER, name: 'ci' }] }, env);
    expect(option.tokens).toEqual([{ token: OTHER, name: 'ci' }]);
    expect(option.users.map((u) => u.user)).toEqual(['carol', 'alice', 'bob']);
    expect(option.notes).toEqual([]);
  });

  it('refuses bad variables and options naming them, never showing the secret (nor a user of SQS_JOBS_DASHBOARD_USERS)', () => {
    const bad: [Parameters<typeof resolveAuth>[0], Record<string, string>, RegExp][] = [
      [undefined, { SQS_JOBS_DASHBOARD_TOKEN: 'tiny-secret' }, /SQS_JOBS_DASHBOARD_TOKEN \(token 1\): must be 16 or more/],
      [
        undefined,
        { SQS_JOBS_DASHBOARD_USERS: 'alice' },
        /SQS_JOBS_DASHBOARD_USERS \(entry 1\): must be user:password .*a password holds none/,
      ],
      // A comma in a password (`long-password,tiny:pw`): its second piece looks like a user, and is not shown.
      [
        undefined,
        { SQS_JOBS_DASHBOARD_USERS: 'alice:long-password,tiny:pw' },
        /SQS_JOBS_DASHBOARD_USERS \(entry 2\): the password must be 8/,
      ],
      [undefined, { SQS_JOBS_DASHBOARD_USERS: 'tiny:long-password,tiny:long-password2' }, /the dashboard's users: a user is named twice/],
      [
        {
          users: [
            { user: 'a', password: 'long-password' },
            { user: 'a', password: 'long-password2' },
          ],
        },
        {},
        /users: a is named twice/,
      ],
      [undefined, { SQS_JOBS_DASHBOARD_AUTH_FILE: join(dir, 'none') }, /SQS_JOBS_DASHBOARD_AUTH_FILE: cannot read .*none: ENOENT/],
      [{ tokens: ['tiny-secret'] }, {}, /options\.auth\.tokens\[0\]: must be 16 or more/],
      [{ file: join(dir, 'none') }, {}, /options\.auth\.file: cannot read/],
    ];
    for (const [auth, env, message] of bad) {
      expect(() => resolveAuth(auth, env), JSON.stringify(env)).toThrow(message);
      expect(() => resolveAuth(auth, env)).not.toThrow(/tiny/);
    }
    const empty = join(dir, 'empty');
    writeFileSync(empty, '# nothing yet\n', { mode: 0o600 });
    expect(() => resolveAuth({ file: empty }, {})).toThrow(/options\.auth\.file: .*empty holds no credential/);
  });
});

describe('the start rule beyond this machine (sqs-jobs dashboard)', () => {
  const none = { users: 0, tokens: 0, alb: undefined };
  it('refuses to listen beyond loopback with neither a sign-in nor --read-only, saying how to give one', () => {
    for (const host of ['0.0.0.0', '::', '10.0.0.5']) {
      expect(() => accessLines(none, host, false), host).toThrow(
        new RegExp(
          `^--host ${host.replaceAll('.', '\\.')} reaches beyond this machine.*--auth-file.*SQS_JOBS_DASHBOARD_TOKEN.*--trust-alb <alb-arn>.*--read-only$`,
        ),
      );
    }
  });

  it('listens beyond loopback with users, tokens, a trusted ALB or --read-only; on loopback with nothing', () => {
    expect(accessLines({ ...none, users: 2, tokens: 1 }, '0.0.0.0', false)).toEqual(['sign-in: basic auth (2 users), bearer tokens (1)']);
    expect(accessLines({ ...none, alb: ALB_ARN }, '0.0.0.0', false)).toEqual([`sign-in: the signed header of the ALB ${ALB_ARN}`]);
    expect(accessLines(none, '0.0.0.0', true)).toEqual([
      'note: listening beyond this machine with no sign-in: anyone who can reach the port sees the queues and dead letters',
    ]);
    expect(accessLines(none, '127.0.0.1', false)).toEqual([]);
  });
});

describe('isLoopbackHost', () => {
  it('is this machine only for 127.0.0.0/8, ::1 and localhost', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', 'localhost', 'LOCALHOST', '::1', '[::1]', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1']) {
      expect(isLoopbackHost(h), h).toBe(true);
    }
    for (const h of ['0.0.0.0', '::', '10.0.0.5', '128.0.0.1', '127.0.0.256', 'example.com', 'localhost.example.com', '::ffff:10.0.0.1']) {
      expect(isLoopbackHost(h), h).toBe(false);
    }
  });
});

describe('the audit line', () => {
  const CSRF = 'a'.repeat(43);
  /** A dashboard on fakes (nothing is read for these answers): its audit lines kept. */
  function dashboard(over: Partial<DashboardSettings>, sources: Partial<DashboardSources> = {}) {
    const { kept, log } = lines();
    const settings: DashboardSettings = {
      queues: ['http://127.0.0.1:4566/000000000000/jobs'],
      basePath: '',
      readOnly: false,
      authorize: undefined,
      gate: new AuthGate({ tokens: [], users: [], alb: undefined, notes: [] }),
      audit: log,
      allowedHosts: undefined,
      slaSeconds: undefined,
      namespace: 'SqsJobs',
      windowMinutes: 60,
      refreshSeconds: 0,
      deadLetterLimit: 200,
      ...over,
    };
    const d = new Dashboard(settings, {
      store: undefined,
      cancel: undefined,
      schedules: undefined,
      close: () => {},
      ...sources,
    } as DashboardSources);
    const post = (path: string, form: Record<string, string>, headers: Record<string, string> = {}) =>
      d.fetch(
        new Request(`http://127.0.0.1:3000${path}`, {
          method: 'POST',
          body: new URLSearchParams({ csrf: CSRF, ...form }),
          headers: { cookie: `sqsjobs_csrf=${CSRF}`, 'content-type': 'application/x-www-form-urlencoded', ...headers },
        }),
      );
    return { post, audit: () => kept.map((l) => [l.level, l.fields.audit, l.message]) };
  }

  it('is written at info when done, warn when refused or failed; the outcome says which', () => {
    const { kept, log } = lines();
    const who = { user: 'alice', via: 'basic' as const };
    const form = new URLSearchParams({ dlq: 'jobs-dlq', tenant: 'acme' });
    writeAudit(log, auditEntry('purge', form, who, 200));
    writeAudit(log, auditEntry('cancel', new URLSearchParams({ id: 'j1' }), who, 200, 'not found'));
    writeAudit(log, auditEntry('schedule-trigger', new URLSearchParams({ id: 's1' }), who, 502, 'failed'));
    writeAudit(log, auditEntry('replay', new URLSearchParams({ confirmation: 'c' }), who, 409));
    expect(kept.map((l) => [l.level, (l.fields.audit as { outcome: string }).outcome, l.message])).toEqual([
      ['info', 'counted', 'dashboard purge (dry run) by alice: counted (200)'],
      ['info', 'not found', 'dashboard cancel by alice: not found (200)'],
      ['warn', 'failed', 'dashboard schedule-trigger by alice: failed (502)'],
      ['warn', 'refused', 'dashboard replay (confirm) by alice: refused (409)'],
    ]);
    expect(kept[0]!.fields.audit).toMatchObject({ dlq: 'jobs-dlq', filter: { tenant: 'acme' } });
  });

  it('says what a cancel came to: cancelled, already ended, not found', async () => {
    const results = ['cancelled', 'ended', 'not-found'] as const;
    let i = 0;
    const cancel = async (jobId: string) => {
      const outcome = results[i++]!;
      return outcome === 'not-found' ? { outcome, jobId } : ({ outcome, status: { jobId, state: 'cancelled' } } as never);
    };
    const d = dashboard({}, { cancel });
    for (const _ of results) expect((await d.post('/job/cancel', { id: 'job-1' })).status).toBe(200);
    expect(d.audit().map(([level, a]) => [level, (a as { outcome: string }).outcome])).toEqual([
      ['info', 'cancelled'],
      ['info', 'already ended'],
      ['info', 'not found'],
    ]);
  });

  it('says a schedule action failed (502) or found no schedule (404)', async () => {
    const schedules = {
      trigger: async () => {
        throw new Error('the job store did not answer');
      },
      pause: async () => false,
      close: () => {},
    };
    const d = dashboard({}, { schedules: schedules as unknown as DashboardSources['schedules'] });
    const failed = await d.post('/schedules/trigger', { id: 'nightly' });
    expect(failed.status).toBe(502);
    expect(await failed.text()).toContain('the job store did not answer');
    expect((await d.post('/schedules/pause', { id: 'nightly' })).status).toBe(404);
    expect(d.audit()).toEqual([
      [
        'warn',
        { action: 'schedule-trigger', user: undefined, auth: undefined, status: 502, outcome: 'failed', id: 'nightly' },
        expect.any(String),
      ],
      [
        'info',
        { action: 'schedule-pause', user: undefined, auth: undefined, status: 404, outcome: 'not found', id: 'nightly' },
        expect.any(String),
      ],
    ]);
  });

  it('is written for an action refused by authorize, by its Host or as another site’s; authorize’s { user } names the user', async () => {
    const authorize = (r: Request) => (r.headers.get('x-test-user') === null ? false : { user: r.headers.get('x-test-user')! });
    const d = dashboard({ authorize, allowedHosts: ['127.0.0.1:3000'], readOnly: true });
    expect((await d.post('/dead-letters/purge', { dlq: 'jobs-dlq' })).status).toBe(403);
    const carol = { 'x-test-user': 'carol' };
    expect((await d.post('/dead-letters/purge', { dlq: 'jobs-dlq' }, { ...carol, host: 'evil.example:3000' })).status).toBe(421);
    expect((await d.post('/job/cancel', { id: 'j' }, { ...carol, 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'cors' })).status).toBe(
      403,
    );
    expect((await d.post('/job/cancel', { id: 'j' }, carol)).status).toBe(403); // read-only
    expect(d.audit()).toEqual([
      [
        'warn',
        { action: 'purge', user: undefined, auth: undefined, status: 403, outcome: 'refused', refused: 'by authorize' },
        'dashboard purge by no signed-in user: refused (403: by authorize)',
      ],
      [
        'warn',
        { action: 'purge', user: 'carol', auth: 'authorize', status: 421, outcome: 'refused', refused: 'another host' },
        'dashboard purge by carol: refused (421: another host)',
      ],
      [
        'warn',
        { action: 'cancel', user: 'carol', auth: 'authorize', status: 403, outcome: 'refused', refused: 'another site' },
        'dashboard cancel by carol: refused (403: another site)',
      ],
      [
        'warn',
        { action: 'cancel', user: 'carol', auth: 'authorize', status: 403, outcome: 'refused' },
        'dashboard cancel by carol: refused (403)',
      ],
    ]);
  });
});
