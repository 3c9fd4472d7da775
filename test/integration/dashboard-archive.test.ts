import { randomUUID } from 'node:crypto';
import { CreateBucketCommand } from '@aws-sdk/client-s3';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createS3Client, S3Archive } from '../../src/adapters/s3-archive.js';
import { SqsQueuePort } from '../../src/adapters/sqs-queue.js';
import { run } from '../../src/cli/program.js';
import { deadLetterMessage } from '../../src/core/dead-letter.js';
import { ATTR_JOB, encodeEnvelope } from '../../src/core/envelope.js';
import { UnrecoverableError } from '../../src/core/errors.js';
import { defineJob } from '../../src/core/job.js';
import { replayArchived } from '../../src/ops/archive-replay.js';
import { archiveDeadLetters } from '../../src/ops/dlq-archive.js';
import { launchChromium, watchedPage } from '../helpers/browser.js';
import { cliDashboard, shoot, useDashboards } from '../helpers/dashboard.js';
import { LOCAL_ENDPOINT, LOCAL_ENV, eventually, freshQueues, queueCounts, sqsClient } from '../helpers/stack.js';
import { recordEvents, useWorkers } from '../helpers/worker.js';

/*
 * The dashboard's Archived dead letters page (issue 54, part 5) in a real browser (Debian's
 * Chromium, playwright-core) over LocalStack's SQS and S3: dead letters a real worker wrote,
 * archived by `dlq archive`'s own code (one replayed from the archive, so marked), listed with
 * their message, filtered and paged as the DLQ page is; read-only; S3 refusing is a notice, not a
 * 500; hostile content stays text; no archive, no page in the nav.
 */
const CREDENTIALS = { AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' };
const ENV = { ...LOCAL_ENV, ...CREDENTIALS };
const sqs = sqsClient();
const queue = new SqsQueuePort(sqs);
const s3 = createS3Client({ endpoint: LOCAL_ENDPOINT, region: 'us-east-1' }, {}, CREDENTIALS);
const bucket = `sqs-jobs-dash-archive-${randomUUID().slice(0, 8)}`;
let browser: Browser;
beforeAll(async () => {
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  sqs.destroy();
  s3.destroy();
});
const start = useWorkers();
const serveDashboard = useDashboards({}, ENV);

const rows = (page: Page) => page.locator('table[data-table="archived"] > tbody > tr');
/** The job ids of the rows shown ('—': none, a body that is no envelope). */
const jobIds = async (page: Page) => (await rows(page).locator(':scope > td:nth-child(3)').allTextContents()).map((t) => t.trim());

/** Eight dead letters a real worker wrote to a fresh queue's DLQ (three reasons, three tenants), archived under `prefix`. */
async function archivedLetters(prefix: string) {
  const { queueUrl, dlqUrl } = await freshQueues(sqs, 'dash-arch');
  const charge = defineJob({
    name: 'charge-invoice',
    args: z.object({ invoice: z.string(), cents: z.number() }),
    handle: (a) => {
      throw new UnrecoverableError(a.cents > 50_000 ? 'card declined: do_not_honor' : 'card expired (exp 2026-09)');
    },
  });
  const receipt = defineJob({ name: 'send-receipt', args: z.object({ email: z.email() }), handle: () => {} });
  const worker = start({ queues: [queueUrl], jobs: [charge, receipt] });
  const events = recordEvents(worker);
  await worker.start();
  const enqueuedAt = new Date().toISOString();
  const invoices = [
    ['inv-1041', 'acme', 12_900],
    ['inv-1042', 'acme', 72_000],
    ['inv-1043', 'globex', 4_500],
    ['inv-1044', 'acme', 98_000],
    ['inv-1045', 'globex', 61_000],
  ] as const;
  const bodies = [
    ...invoices.map(([id, tenant, cents]) =>
      encodeEnvelope({ v: 1, id, job: 'charge-invoice', args: { invoice: id, cents }, enqueuedAt, tenant }),
    ),
    // Not through a producer: args its schema refuses, and a body that is no JSON at all.
    ...['rcpt-7', 'rcpt-8'].map((id) =>
      encodeEnvelope({ v: 1, id, job: 'send-receipt', args: { email: 'billing at initech' }, enqueuedAt, tenant: 'initech' }),
    ),
    'charge-invoice inv-1046',
  ];
  for (const MessageBody of bodies) await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody }));
  await eventually(() => events.count('job:dead-lettered') === bodies.length, 'every message dead-lettered', 20_000);
  await worker.stop();
  await eventually(async () => (await queueCounts(sqs, dlqUrl)).visible === bodies.length, 'the DLQ holding them all');
  const store = new S3Archive(s3, { bucket });
  const messageIds = new Map<string, string>();
  const archived = await archiveDeadLetters(queue, store, {
    dlqUrl,
    prefix,
    olderThanSeconds: 0,
    onArchived: (l) => void messageIds.set(l.jobId ?? 'poison', l.messageId),
  });
  expect(archived.archived).toBe(bodies.length);
  // One sent back from the archive already (`dlq replay --from`): marked, so shown as replayed.
  const replay = await replayArchived(queue, store, { prefix, sourceQueueUrl: queueUrl, filter: { id: 'inv-1042' } });
  expect(replay.moved).toBe(1);
  return { queueUrl, messageIds };
}

describe('the dashboard’s archived dead letters', () => {
  it('lists what `dlq archive` wrote to S3, each opened to its message, replayed or not; filters as the DLQ page; pages by key; read-only', async () => {
    const prefix = `orders-${randomUUID().slice(0, 8)}/`;
    const { queueUrl, messageIds } = await archivedLetters(prefix);
    const url = `s3://${bucket}/${prefix}`;
    const origin = await serveDashboard({ queues: [queueUrl], archive: url });
    const { page, incidents } = await watchedPage(browser, origin);

    await page.goto(`${origin}/ops/`);
    await page.click('nav a[href="/ops/archive"]');
    await page.locator('h1', { hasText: 'Archived dead letters' }).waitFor();
    expect(await rows(page).count()).toBe(8);
    // In key order (the DLQ message ids), every id once.
    const shown = await rows(page).evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-message')));
    expect(shown).toEqual([...messageIds.values()].sort());
    const replayed = page.locator(`tr[data-message="${messageIds.get('inv-1042')}"]`);
    await expect(replayed.locator(':scope > td').allTextContents()).resolves.toEqual([
      expect.any(String),
      'charge-invoice',
      'inv-1042',
      'acme',
      'unrecoverable',
      '1',
      expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      'yes',
      expect.stringContaining('card declined: do_not_honor'),
    ]);
    expect(await page.locator('td[data-replayed="yes"]').count()).toBe(1);
    const poison = page.locator(`tr[data-message="${messageIds.get('poison')}"]`);
    await expect(poison.locator(':scope > td').nth(4).textContent()).resolves.toBe('invalid-json');
    // A row opens its message: the body pretty-printed, every attribute.
    await replayed.locator('summary').click();
    await expect(replayed.locator('pre[data-body]').textContent()).resolves.toMatch(/"invoice": "inv-1042",\n\s+"cents": 72000/);
    await expect(replayed.textContent()).resolves.toMatch(/sqsjobs-dlq-reason\s*unrecoverable/);
    await expect(replayed.textContent()).resolves.toContain(`from ${queueUrl}`);
    // Read-only: no form posts, no button but the filter's; the command to replay says what to run.
    expect(await page.locator('form[method="post"], button[data-action]').count()).toBe(0);
    await expect(page.locator('code[data-command="replay"]').textContent()).resolves.toBe(`sqs-jobs dlq replay --from ${url} --dry-run`);
    await shoot(page, 'archive');

    // The DLQ page's filters, in the URL (shareable), and in the command.
    await page.fill('input[name="tenant"]', 'acme');
    await page.fill('input[name="error"]', 'DECLINED');
    await page.click('form.filters button[type="submit"]');
    await page.waitForURL(/tenant=acme/);
    expect((await jobIds(page)).sort()).toEqual(['inv-1042', 'inv-1044']);
    await expect(page.locator('code[data-command="replay"]').textContent()).resolves.toBe(
      `sqs-jobs dlq replay --from ${url} --tenant acme --error DECLINED --dry-run`,
    );
    await page.goto(`${origin}/ops/archive?reason=invalid-args`);
    expect((await jobIds(page)).sort()).toEqual(['rcpt-7', 'rcpt-8']);
    await page.goto(`${origin}/ops/archive?olderThan=3600`);
    await expect(page.locator('[data-empty]').textContent()).resolves.toContain('No archived dead letter matches');
    await page.goto(`${origin}/ops/archive?olderThan=soon`);
    await expect(page.locator('[role="alert"]').textContent()).resolves.toBe(
      'The filter was not applied: olderThan: must be a whole number of seconds',
    );

    // Paged by key: 3, 3, 2, the `next` key as `after`, the filter and limit kept across pages.
    await page.goto(`${origin}/ops/archive?limit=3`);
    const seen: string[] = [];
    for (const expected of [3, 3, 2]) {
      expect(await rows(page).count()).toBe(expected);
      seen.push(...(await rows(page).evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-message')!))));
      if (expected === 2) break;
      await page.click('a[data-page="next"]');
      await page.waitForURL(/after=/);
    }
    expect(seen).toEqual([...messageIds.values()].sort());
    await expect(page.locator('[data-page="last"]').count()).resolves.toBe(1);
    await page.click('a[data-page="first"]');
    expect(await rows(page).count()).toBe(3);
    // Filtered, a page reads at most 5 × its limit records (here 5 of the 8), then its next link reads on; followed, the filter kept, it finds them all.
    await page.goto(`${origin}/ops/archive?tenant=globex&limit=1`);
    const globex: string[] = [];
    for (let pages = 1; ; pages++) {
      expect(pages).toBeLessThanOrEqual(8);
      expect(new URL(page.url()).searchParams.get('tenant')).toBe('globex');
      globex.push(...(await jobIds(page)));
      expect(Number(/of (\d+) read/.exec((await page.locator('[data-count]').textContent()) ?? '')?.[1])).toBeLessThanOrEqual(5);
      if ((await page.locator('a[data-page="next"]').count()) === 0) break;
      const after = new URL(page.url()).searchParams.get('after');
      await page.click('a[data-page="next"]');
      await page.waitForURL((u) => u.searchParams.get('after') !== after);
    }
    expect(globex.sort()).toEqual(['inv-1043', 'inv-1045']);
    await page.goto(`${origin}/ops/archive?limit=500`);
    await expect(page.locator('[role="alert"]').textContent()).resolves.toContain('limit: must be a whole number 1-200');
    expect(incidents).toEqual([]);
  });

  it('without an archive, no Archived page in the nav; S3 refusing is a notice (200); hostile content stays text', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'dash-arch-none');
    const none = await serveDashboard({ queues: [queueUrl] });
    const { page, incidents } = await watchedPage(browser, none);
    await page.goto(`${none}/ops/`);
    await page.locator('nav a[href="/ops/dead-letters"]').waitFor();
    expect(await page.locator('nav a[href="/ops/archive"]').count()).toBe(0);
    await page.goto(`${none}/ops/archive`);
    await expect(page.locator('[data-empty]').textContent()).resolves.toContain('No archive is configured');

    // A bucket that is not there: the page says so, answered 200, not a 500.
    const missing = await serveDashboard({ queues: [queueUrl], archive: `s3://no-such-${bucket}/x` });
    const refused = await watchedPage(browser, missing);
    const answer = await refused.page.goto(`${missing}/ops/archive`);
    expect(answer?.status()).toBe(200);
    await expect(refused.page.locator('nav a[href="/ops/archive"]').count()).resolves.toBe(1);
    await expect(refused.page.locator('[role="alert"]').textContent()).resolves.toMatch(
      new RegExp(
        `^The archive s3://no-such-${bucket}/x/ could not be read: .*could not list s3://no-such-${bucket}/x/dead-letters/: no bucket named`,
      ),
    );

    // Hostile text in a dead letter (and the URL), archived and listed through the port (`{ store, prefix }`): text, never markup.
    const prefix = `hostile-${randomUUID().slice(0, 8)}/`;
    const hostile = '"><img src=x onerror=alert(1)>';
    const original = {
      queueUrl,
      messageId: randomUUID(),
      receiptHandle: '',
      body: encodeEnvelope({
        v: 1,
        id: 'evil-1',
        job: 'x',
        args: { html: '<script>alert(2)</script>' },
        enqueuedAt: new Date().toISOString(),
        tenant: '\u202Eevil',
      }),
      receiveCount: 1,
      sentAt: Date.now(),
      groupId: undefined,
      attributes: { [ATTR_JOB]: { DataType: 'String', StringValue: hostile } },
    };
    await queue.send(dlqUrl, deadLetterMessage(original, 'unrecoverable', `<script>alert(3)</script>`));
    const store = new S3Archive(s3, { bucket });
    expect((await archiveDeadLetters(queue, store, { dlqUrl, prefix, olderThanSeconds: 0 })).archived).toBe(1);
    const ported = await serveDashboard({ queues: [queueUrl], archive: { store, prefix, url: `s3://${bucket}/${prefix}` } });
    const { page: hostilePage, incidents: hostileIncidents } = await watchedPage(browser, ported);
    await hostilePage.goto(`${ported}/ops/archive?job=${encodeURIComponent(hostile)}`);
    const row = rows(hostilePage).first();
    await row.locator('summary').click();
    await expect(row.locator(':scope > td').nth(1).textContent()).resolves.toBe(hostile);
    await expect(row.locator(':scope > td').nth(3).textContent()).resolves.toBe('<U+202E>evil');
    await expect(row.locator('summary').textContent()).resolves.toBe('<script>alert(3)</script>');
    await expect(row.locator('pre[data-body]').textContent()).resolves.toContain('"html": "<script>alert(2)</script>"');
    await expect(hostilePage.inputValue('input[name="job"]')).resolves.toBe(hostile);
    await expect(hostilePage.locator('code[data-command="replay"]').textContent()).resolves.toBe(
      `sqs-jobs dlq replay --from s3://${bucket}/${prefix} --job '${hostile}' --dry-run`,
    );
    expect(await hostilePage.locator('img, script:not([src])').count()).toBe(0);
    expect([...incidents, ...refused.incidents, ...hostileIncidents]).toEqual([]);
  });

  it('`sqs-jobs dashboard --archive s3://…` serves the page (S3 from AWS_ENDPOINT_URL); --s3-endpoint alone is a usage error', async () => {
    const prefix = `cli-${randomUUID().slice(0, 8)}/`;
    const { queueUrl } = await freshQueues(sqs, 'dash-arch-cli');
    const { url, stop } = await cliDashboard(['--queue', queueUrl, '--archive', `s3://${bucket}/${prefix}`, '--read-only'], {
      ...process.env,
      ...ENV,
      SQS_JOBS_LOG_LEVEL: 'silent',
    });
    try {
      const res = await fetch(`${url}archive`);
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).toContain('<a href="/archive" aria-current="page">Archived</a>');
      expect(text).toContain('No archived dead letter is here.');
    } finally {
      await stop();
    }
    let err = '';
    const io = {
      out: () => {},
      err: (t: string) => {
        err += t;
      },
      env: ENV,
      signal: new AbortController().signal,
    };
    expect(await run(['dashboard', '--s3-endpoint', LOCAL_ENDPOINT], io)).toBe(2);
    expect(err).toContain('--s3-endpoint is for the archive: it goes with --archive');
    err = '';
    expect(await run(['dashboard', '--queue', queueUrl, '--archive', 's3://Bad_Bucket/x'], io)).toBe(1);
    expect(err).toContain('CONFIG_INVALID: --archive: "Bad_Bucket" is not an S3 bucket name');
  });
});
