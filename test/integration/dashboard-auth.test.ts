import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALB_ARN, cliDashboard, type FakeAlb, startFakeAlb, useDashboards } from '../helpers/dashboard.js';
import { LOCAL_ENV, eventually, freshQueues, queueCounts, sqsClient } from '../helpers/stack.js';

// The dashboard's own sign-in (issue 54, part 6) over real HTTP on LocalStack: a wrong or missing
// credential (or ALB header) gets 401 and moves nothing; the right one acts and its audit line
// names the user; read-only on loopback needs none; the CLI refuses to serve actions beyond this
// machine without one (the rule itself: test/unit/dashboard/auth.test.ts).
const sqs = sqsClient();
const dir = mkdtempSync(join(tmpdir(), 'dash-auth-'));
let alb: FakeAlb;
beforeAll(async () => {
  alb = await startFakeAlb();
});
afterAll(async () => {
  sqs.destroy();
  rmSync(dir, { recursive: true, force: true });
  await alb.close();
});
const serve = useDashboards({}, LOCAL_ENV);

const PASSWORD = `pw-${randomUUID()}`;
const TOKEN = `tok-${randomUUID()}`;
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
const BASIC_CHALLENGE = 'Basic realm="sqs-jobs", charset="UTF-8"';

interface Line {
  readonly level: 'info' | 'warn';
  readonly fields: { audit?: Record<string, unknown> };
  readonly message: string;
}

/** A logger that keeps the audit lines. */
function auditLog(): { lines: Line[]; logger: { info: (f: object, m: string) => void; warn: (f: object, m: string) => void } } {
  const lines: Line[] = [];
  return {
    lines,
    logger: {
      info: (fields, message) => lines.push({ level: 'info', fields, message }),
      warn: (fields, message) => lines.push({ level: 'warn', fields, message }),
    },
  };
}

/** A page read with `headers` (the credential): the CSRF cookie it set and the token in its forms. */
async function session(url: string, headers: Record<string, string>): Promise<{ cookie: string; csrf: string; page: string }> {
  const res = await fetch(url, { headers });
  expect(res.status).toBe(200);
  const page = await res.text();
  const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0]!;
  const csrf = /name="csrf" value="([^"]+)"/.exec(page)?.[1] ?? '';
  return { cookie, csrf, page };
}

function post(url: string, form: Record<string, string>, headers: Record<string, string>): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    body: new URLSearchParams(form),
    headers: { origin: new URL(url).origin, ...headers },
    redirect: 'manual',
  });
}

async function inDlq(dlqUrl: string): Promise<number> {
  const c = await queueCounts(sqs, dlqUrl);
  return c.visible + c.inFlight;
}

const queueName = (url: string) => url.slice(url.lastIndexOf('/') + 1);

describe.concurrent('the dashboard with a sign-in', () => {
  it('answers every request without the right credential 401, moving nothing; the right one acts, and the audit line names the user', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'dash-auth');
    await sqs.send(new SendMessageCommand({ QueueUrl: dlqUrl, MessageBody: '{"v":1,"id":"auth-1","job":"x","args":{}}' }));
    const { lines, logger } = auditLog();
    const users = [{ user: 'alice', password: PASSWORD }];
    // An archive that counts what it is asked: a request refused at the door asks it nothing.
    const archiveCalls: string[] = [];
    const archive = {
      store: {
        list: async (prefix: string) => {
          archiveCalls.push(`list ${prefix}`);
          return { objects: [], next: undefined };
        },
        get: async (key: string) => {
          archiveCalls.push(`get ${key}`);
          return undefined;
        },
      },
      prefix: 'dlq/',
      url: 's3://auth-test/dlq/',
    };
    const origin = await serve({ queues: [queueUrl], auth: { users, tokens: [{ token: TOKEN, name: 'deploy-bot' }] }, logger, archive });
    const purge = `${origin}/ops/dead-letters/purge`;

    // Pages, assets, HEAD and actions alike; the browser is asked for a user and password.
    for (const [path, method] of [
      ['/ops/', 'GET'],
      ['/ops/assets/dashboard.css', 'GET'],
      ['/ops/dead-letters', 'HEAD'],
      ['/ops/dead-letters/purge', 'POST'],
      ['/ops/archive', 'GET'],
    ] as const) {
      const res = await fetch(`${origin}${path}`, { method });
      expect([path, res.status, res.headers.get('www-authenticate')]).toEqual([path, 401, BASIC_CHALLENGE]);
    }
    expect(archiveCalls).toEqual([]);

    // Alice's dry run: it counts the dead letter and keeps a confirmation.
    const alice = basic('alice', PASSWORD);
    const { cookie, csrf } = await session(`${origin}/ops/dead-letters`, { authorization: alice });
    const dry = await post(purge, { dlq: queueName(dlqUrl), csrf, job: 'x' }, { cookie, authorization: alice });
    expect(dry.status).toBe(200);
    const confirmation = /name="confirmation" value="([^"]+)"/.exec(await dry.text())?.[1];
    expect(confirmation).toBeDefined();

    // The confirmation, with its cookie and CSRF token, but no credential or a wrong one: 401, and the dead letter stays.
    const form = { confirmation: confirmation!, csrf };
    const wrong: [Record<string, string>, string][] = [
      [{}, BASIC_CHALLENGE],
      [{ authorization: basic('alice', `${PASSWORD}x`) }, BASIC_CHALLENGE],
      [{ authorization: basic('mallory', PASSWORD) }, BASIC_CHALLENGE],
      [
        { authorization: `Bearer ${TOKEN.slice(0, -1)}${TOKEN.endsWith('0') ? '1' : '0'}` },
        'Bearer realm="sqs-jobs", error="invalid_token"',
      ],
    ];
    for (const [headers, challenge] of wrong) {
      const res = await post(purge, form, { cookie, ...headers });
      expect([res.status, res.headers.get('www-authenticate')], JSON.stringify(headers)).toEqual([401, challenge]);
    }
    expect(await inDlq(dlqUrl)).toBe(1);

    // The deploy bot's token confirms it: done, and the dead letter is gone.
    const done = await post(purge, form, { cookie, authorization: `Bearer ${TOKEN}` });
    expect(done.status).toBe(303);
    await eventually(async () => (await inDlq(dlqUrl)) === 0, 'the DLQ to be empty');

    const audit: Record<string, unknown>[] = lines.map((l) => ({ level: l.level, ...l.fields.audit }));
    const refused = { level: 'warn', action: 'purge', status: 401, outcome: 'refused' };
    expect(audit.filter((a) => a.refused !== undefined)).toEqual([
      { ...refused, refused: 'no credential' },
      { ...refused, refused: 'no credential' },
      ...Array.from({ length: 3 }, () => ({ ...refused, refused: 'wrong credential' })),
    ]);
    const dlq = queueName(dlqUrl);
    expect(audit.filter((a) => a.refused === undefined)).toEqual([
      {
        level: 'info',
        action: 'purge',
        step: 'dry run',
        user: 'alice',
        auth: 'basic',
        status: 200,
        outcome: 'counted',
        dlq,
        filter: { job: 'x' },
      },
      {
        level: 'info',
        action: 'purge',
        step: 'confirm',
        user: 'deploy-bot',
        auth: 'bearer',
        status: 303,
        outcome: 'done',
        dlq,
        filter: { job: 'x' },
        done: 1,
        matched: 1,
      },
    ]);
    expect(lines.at(-1)?.message).toBe('dashboard purge (confirm) by deploy-bot: done (303)');
    // No line holds a credential.
    expect(JSON.stringify(lines)).not.toMatch(new RegExp(`${PASSWORD}|${TOKEN.slice(4, 20)}`));
  });

  it('read-only on loopback needs no credential: its pages answer, its actions are refused (403) and audited', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'dash-auth-ro');
    const { lines, logger } = auditLog();
    const origin = await serve({ queues: [queueUrl], readOnly: true, logger });
    const page = await fetch(`${origin}/ops/job`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('read-only');
    const res = await post(`${origin}/ops/dead-letters/purge`, { dlq: queueName(dlqUrl) }, {});
    expect(res.status).toBe(403);
    expect(lines.map((l) => [l.level, l.fields.audit])).toEqual([
      ['warn', { action: 'purge', user: undefined, auth: undefined, status: 403, outcome: 'refused' }],
    ]);
  });

  it('behind a trusted ALB: only an unexpired header that ALB signed acts (401 otherwise, nothing moved); the audit line names its email', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'dash-auth-alb');
    await sqs.send(new SendMessageCommand({ QueueUrl: dlqUrl, MessageBody: '{"v":1,"id":"auth-3","job":"x","args":{}}' }));
    const { lines, logger } = auditLog();
    const origin = await serve({ queues: [queueUrl], auth: { trustAlb: ALB_ARN, albKeysUrl: alb.keysUrl }, logger });
    const purge = `${origin}/ops/dead-letters/purge`;
    const claims = { sub: '8d0c-4e1f', email: 'alice@example.com' };
    const signed = { 'x-amzn-oidc-data': alb.token(claims) };
    const { cookie, csrf } = await session(`${origin}/ops/dead-letters`, signed);
    const dry = await post(purge, { dlq: queueName(dlqUrl), csrf }, { cookie, ...signed });
    expect(dry.status).toBe(200);
    const form = { confirmation: /name="confirmation" value="([^"]+)"/.exec(await dry.text())?.[1] ?? '', csrf };

    const now = Math.floor(Date.now() / 1000);
    const wrong: [Record<string, string>, string][] = [
      [{}, 'no credential'],
      [{ 'x-amzn-oidc-data': alb.token(claims, { signer: ALB_ARN.replace('/ops/', '/other/') }) }, 'signed by another load balancer'],
      [{ 'x-amzn-oidc-data': alb.token(claims, { exp: now - 300 }) }, 'expired'],
      [{ 'x-amzn-oidc-data': alb.token(claims, {}, true) }, 'bad signature'],
    ];
    for (const [headers, why] of wrong) {
      const res = await post(purge, form, { cookie, ...headers });
      expect([res.status, res.headers.get('www-authenticate')], why).toEqual([401, null]);
    }
    expect(await inDlq(dlqUrl)).toBe(1);

    expect((await post(purge, form, { cookie, ...signed })).status).toBe(303);
    await eventually(async () => (await inDlq(dlqUrl)) === 0, 'the DLQ to be empty');
    const audit = lines.map((l) => l.fields.audit);
    expect(audit.map((a) => a?.refused).filter((r) => r !== undefined)).toEqual([
      'no credential',
      ...wrong.slice(1).map(([, why]) => `wrong credential: ${why}`),
    ]);
    expect(audit.filter((a) => a?.refused === undefined).map((a) => [a?.user, a?.auth, a?.outcome])).toEqual([
      ['alice@example.com', 'alb', 'counted'],
      ['alice@example.com', 'alb', 'done'],
    ]);
  });
});

/** A clean environment for the CLI: nothing from the runner's SQS_JOBS_* leaks in. */
const cliEnv = {
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  AWS_ACCESS_KEY_ID: 'test',
  AWS_SECRET_ACCESS_KEY: 'test',
  ...LOCAL_ENV,
};

function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const options = { env: { ...cliEnv, ...env }, timeout: 30_000 };
    execFile('node_modules/.bin/tsx', ['src/cli/main.ts', ...args], options, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr });
    });
  });
}

describe.concurrent('`sqs-jobs dashboard` and its sign-in', () => {
  it('refuses to start beyond this machine with neither a sign-in nor --read-only (CONFIG_INVALID, exit 1)', async () => {
    const r = await cli(['dashboard', '--host', '0.0.0.0', '--port', '0', '--queue', 'http://127.0.0.1:4566/000000000000/jobs']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^sqs-jobs: CONFIG_INVALID: --host 0\.0\.0\.0 reaches beyond this machine/);
    for (const flag of ['--auth-file', 'SQS_JOBS_DASHBOARD_TOKEN', '--trust-alb', '--read-only']) expect(r.stderr).toContain(flag);
    expect(r.stdout).toBe('');
  });

  it('serves with the users and tokens of an auth file: 401 without, the page with; the audit line names the user, whatever the log level', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'dash-auth-cli');
    // A dead letter, so the page has a form that acts (and its CSRF token).
    await sqs.send(new SendMessageCommand({ QueueUrl: dlqUrl, MessageBody: '{"v":1,"id":"auth-2","job":"x","args":{}}' }));
    const file = join(dir, 'auth');
    writeFileSync(file, `# who may use the dashboard\nbasic alice ${PASSWORD}\nbearer ${TOKEN} deploy-bot\n`, { mode: 0o600 });
    const { url, out, stop } = await cliDashboard(['--queue', queueUrl], {
      ...cliEnv,
      SQS_JOBS_DASHBOARD_AUTH_FILE: file,
      SQS_JOBS_LOG_LEVEL: 'silent',
    });
    try {
      expect(out()).toContain('sign-in: basic auth (1 user), bearer tokens (1)');
      const refused = await fetch(url);
      expect([refused.status, refused.headers.get('www-authenticate')]).toEqual([401, BASIC_CHALLENGE]);
      const alice = basic('alice', PASSWORD);
      const { cookie, csrf } = await session(`${url}dead-letters`, { authorization: alice });
      const dry = await post(
        `${url}dead-letters/purge`,
        { dlq: queueName(dlqUrl), csrf, tenant: 'acme' },
        { cookie, authorization: alice },
      );
      expect(dry.status).toBe(200);
      const line = await eventually(
        () =>
          out()
            .split('\n')
            .find((l) => l.includes('"audit"')),
        `the audit line (got: ${out()})`,
      );
      expect(JSON.parse(line)).toMatchObject({
        level: 30,
        component: 'dashboard',
        audit: {
          action: 'purge',
          step: 'dry run',
          user: 'alice',
          auth: 'basic',
          dlq: queueName(dlqUrl),
          filter: { tenant: 'acme' },
          status: 200,
          outcome: 'counted',
        },
        msg: 'dashboard purge (dry run) by alice: counted (200)',
      });
      expect(out()).not.toContain(PASSWORD);
    } finally {
      expect(await stop(), out()).toBe(0);
    }
  });
});
