import { randomUUID } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDynamoClient } from '../../src/adapters/aws-clients.js';
import { createJobTable, DynamoJobStore } from '../../src/adapters/dynamodb-store.js';
import { run } from '../../src/cli/program.js';
import { UnrecoverableError } from '../../src/core/errors.js';
import { defineJob } from '../../src/core/job.js';
import { createProducer } from '../../src/producer/producer.js';
import { launchChromium, watchedPage } from '../helpers/browser.js';
import { shoot, useDashboards } from '../helpers/dashboard.js';
import { eventually, freshQueues, LOCAL_DYNAMODB, LOCAL_ENV, sqsClient } from '../helpers/stack.js';
import { testWorker } from '../helpers/worker.js';

/*
 * The jobs list as an operator uses it (issue 54): tracked jobs enqueued for tenants by a real
 * producer and run by a real worker (SQS on LocalStack or moto, memcached, DynamoDB Local), then
 * found with `sqs-jobs jobs list` and on the dashboard's Jobs page in a real browser.
 */
const CREDENTIALS = { AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' };
const ENV = { ...LOCAL_ENV, ...CREDENTIALS };
const sqs = sqsClient();
const dynamo = createDynamoClient({ endpoint: LOCAL_DYNAMODB, region: 'us-east-1' }, {}, CREDENTIALS);
const table = `jobs-list-${randomUUID().slice(0, 8)}`;
const store = { table, endpoint: LOCAL_DYNAMODB };
const run6 = randomUUID().slice(0, 6);
const acme = `acme-${run6}`;
const globex = `globex-${run6}`;
/** A tenant and an error whose text is markup: shown as text, never run. */
const evil = `<img/src=x/onerror=alert(1)>-${run6}`;
let browser: Browser;
let queue = '';
const ids: { declined: string; charged: string; other: string } = { declined: '', charged: '', other: '' };

beforeAll(async () => {
  await createJobTable(dynamo, table);
  const { queueUrl } = await freshQueues(sqs, 'jobs-list');
  queue = queueUrl;
  const charge = defineJob({
    name: 'charge-invoice',
    args: z.object({ fail: z.boolean() }),
    track: true,
    handle: ({ fail }) => {
      if (fail) throw new UnrecoverableError('card declined');
    },
  });
  const producer = createProducer({ queueUrl, store }, ENV);
  ids.declined = (await producer.enqueue(charge, { fail: true }, { tenant: acme })).jobId;
  ids.charged = (await producer.enqueue(charge, { fail: false }, { tenant: acme })).jobId;
  ids.other = (await producer.enqueue(charge, { fail: true }, { tenant: globex })).jobId;
  producer.close();
  const worker = testWorker({ queues: [queueUrl], jobs: [charge], store });
  await worker.start();
  const reader = new DynamoJobStore({ client: dynamo, table, ttlSeconds: 3_600 });
  await eventually(
    async () => (await Promise.all(Object.values(ids).map((id) => reader.get(id)))).every((s) => s?.finishedAt !== undefined),
    'the three jobs to end',
    30_000,
  );
  await worker.stop();
  // Twelve older ones of another job for acme, to page through, and one whose texts are markup.
  const at = Date.now() - 10 * 60_000;
  await Promise.all(
    Array.from({ length: 12 }, (_, i) =>
      reader.transition({
        jobId: `mail-${run6}-${i}`,
        jobName: 'send-email',
        tenant: acme,
        state: 'completed',
        attempt: 1,
        at: new Date(at + i),
      }),
    ),
  );
  await reader.transition({
    jobId: `evil-${run6}`,
    jobName: 'send-email',
    tenant: evil,
    state: 'retrying',
    attempt: 1,
    at: new Date(Date.now() - 2 * 3_600_000), // out of the last hour's page, shot for the docs
    error: '<script>alert("boom")</script>',
  });
  browser = await launchChromium();
}, 60_000);
afterAll(async () => {
  await browser?.close();
  sqs.destroy();
  dynamo.destroy();
});

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io = {
    out: (t: string) => {
      out += t;
    },
    err: (t: string) => {
      err += t;
    },
    env: CREDENTIALS,
    signal: new AbortController().signal,
  };
  const code = await run([...args, '--table', table, '--dynamodb-endpoint', LOCAL_DYNAMODB], io);
  return { code, out, err };
}

describe('sqs-jobs jobs list', () => {
  it('finds the failed charge-invoice jobs of acme in the last hour, pages by cursor, prints JSON; bad flags are CONFIG_INVALID', async () => {
    const found = await cli(['jobs', 'list', '--job', 'charge-invoice', '--state', 'failed', '--tenant', acme, '--since', '1h']);
    expect(found.code, found.err).toBe(0);
    const [header, row, last] = found.out.trim().split('\n');
    expect(header).toMatch(/^JOB ID +JOB +TENANT +STATE +ATTEMPT +STATE SINCE +ERROR \/ REASON$/);
    expect(row).toMatch(new RegExp(`^${ids.declined} +charge-invoice +${acme} +failed +1 +\\S+Z +unrecoverable: card declined$`));
    expect(last).toBe('(last page)');

    // acme's jobs, 5 a page: the charge, the decline, then the twelve mails, newest first.
    const pages: string[][] = [];
    let cursor: string[] = [];
    for (;;) {
      const page = await cli(['jobs', 'list', '--tenant', acme, '--limit', '5', '--json', ...cursor]);
      expect(page.code, page.err).toBe(0);
      const { rows, cursor: next } = JSON.parse(page.out) as { rows: { jobId: string }[]; cursor?: string };
      pages.push(rows.map((r) => r.jobId));
      if (next === undefined) break;
      cursor = ['--cursor', next];
    }
    expect(pages.map((p) => p.length)).toEqual([5, 5, 4]);
    expect(pages.flat().slice(0, 2).sort()).toEqual([ids.charged, ids.declined].sort());
    expect(pages.flat().slice(2)).toEqual(Array.from({ length: 12 }, (_, i) => `mail-${run6}-${11 - i}`));

    const sinceHint = await cli(['jobs', 'list', '--tenant', acme, '--limit', '5', '--since', '1h']);
    expect(sinceHint.out).toMatch(/\nnext page: --cursor \S+ --since \d{4}-\d\d-\d\dT[\d:.]+Z\n$/); // the time 1h resolved to
    const none = await cli(['jobs', 'list', '--tenant', acme, '--state', 'cancelled']);
    expect(none.out).toMatch(/^no tracked job matches \(only tracked jobs are listed/);
    for (const [flag, value, rule] of [
      ['--state', 'dead', /must be one of scheduled, waiting, running, retrying, completed, failed, cancelled/],
      ['--since', 'yesterday', /must be a duration back from now/],
      ['--since', '2026-02-30', /2026-02-30 is no date/],
      ['--since', '2026-12-01T09:00', /add its zone/],
      ['--since', '2026-12-01T24:00Z', /out of range/],
      ['--limit', '1e1', /must be a whole number from 1 to 200/],
      ['--limit', '500', /must be a whole number from 1 to 200/],
      ['--cursor', 'abc', /must be a cursor a page of this list gave/],
    ] as const) {
      const bad = await cli(['jobs', 'list', flag, value, '--dynamodb-endpoint', 'http://127.0.0.1:1']);
      expect([bad.code, bad.out]).toEqual([1, '']);
      expect(bad.err).toMatch(new RegExp(`^sqs-jobs: CONFIG_INVALID: ${flag}: `));
      expect(bad.err).toMatch(rule);
    }
  });
});

const serveDashboard = useDashboards({ store }, ENV);

describe('the dashboard’s Jobs page', () => {
  it('filters with a GET form, links each row to its job, pages older and back, and shows markup as text', async () => {
    const origin = await serveDashboard({ queues: [queue] });
    const { page, incidents } = await watchedPage(browser, origin);
    await page.goto(`${origin}/ops/jobs?since=1h`);
    await page.locator(`tr[data-job-id="${ids.declined}"]`).waitFor();
    expect(await page.locator(`tr[data-job-id="evil-${run6}"]`).count()).toBe(0);
    await shoot(page, 'jobs');
    await page.click('a:text("clear")');
    expect(await page.locator(`tr[data-job-id="evil-${run6}"]`).textContent()).toContain(evil);
    expect(await page.locator(`tr[data-job-id="evil-${run6}"]`).textContent()).toContain('<script>alert("boom")</script>');

    await page.fill('input[name="job"]', 'charge-invoice');
    await page.selectOption('select[name="state"]', 'failed');
    await page.fill('input[name="tenant"]', acme);
    await page.fill('input[name="since"]', '1h');
    await page.click('form.filters button[type="submit"]');
    await page.waitForURL(/state=failed/);
    expect(
      await page.locator('table[data-table="jobs"] tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-job-id'))),
    ).toEqual([ids.declined]);
    await page.click(`tr[data-job-id="${ids.declined}"] a`);
    await page.locator('[data-state="failed"]').waitFor();
    expect(await page.locator('pre[data-error]').textContent()).toMatch(/card declined/);

    await page.goto(`${origin}/ops/jobs?tenant=${encodeURIComponent(acme)}&limit=5&since=1h`);
    expect(await page.locator('a[data-page="older"]').getAttribute('href')).toMatch(/since=\d{4}-\d\d-\d\dT[\d%A:.]+Z/);
    await page.click('a[data-page="older"]');
    await page.locator(`tr[data-job-id="mail-${run6}-8"]`).waitFor(); // 11, 10 and 9 came after the two charges
    expect(await page.locator('table[data-table="jobs"] tbody tr').count()).toBe(5);
    await page.click('a[data-page="newest"]');
    await page.locator(`tr[data-job-id="${ids.charged}"]`).waitFor();

    const bad = await page.request.get(`${origin}/ops/jobs?since=yesterday`);
    expect(await bad.text()).toMatch(/data-problem>since: must be a duration back from now/);
    expect(incidents).toEqual([]);
  });
});
