import { randomUUID } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDynamoClient } from '../../src/adapters/aws-clients.js';
import { createJobTable } from '../../src/adapters/dynamodb-store.js';
import { defineJob } from '../../src/core/job.js';
import { createSchedules } from '../../src/ops/wiring.js';
import type { MetricPoint } from '../../src/ports/metrics-sink.js';
import { defineSchedule } from '../../src/schedules/define.js';
import { launchChromium, watchedPage } from '../helpers/browser.js';
import { shoot, useDashboards } from '../helpers/dashboard.js';
import { LOCAL_DYNAMODB, LOCAL_ENV, eventually, freshQueues, sleep, sqsClient } from '../helpers/stack.js';
import { useWorkers } from '../helpers/worker.js';

// The dashboard's Schedules page in a real browser (Debian's Chromium, playwright-core), over
// schedules in DynamoDB Local fired by a real worker on LocalStack's (or moto's) SQS and memcached.
const CREDENTIALS = { AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' };
const ENV = { ...LOCAL_ENV, ...CREDENTIALS };
const sqs = sqsClient();
const dynamo = createDynamoClient({ endpoint: LOCAL_DYNAMODB, region: 'us-east-1' }, {}, CREDENTIALS);
const table = `dash-sched-${randomUUID().slice(0, 8)}`;
const store = { table, endpoint: LOCAL_DYNAMODB };
let browser: Browser;
beforeAll(async () => {
  await createJobTable(dynamo, table);
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  sqs.destroy();
  dynamo.destroy();
});
const start = useWorkers();

const serveDashboard = useDashboards({ store }, ENV);

describe('the dashboard’s schedules', () => {
  it('lists them with next occurrences in their zone and UTC, shows the last ones with their jobs, skipped ones, and pauses, resumes and runs one now; the worker publishes lateness and skips', async () => {
    const { queueUrl } = await freshQueues(sqs, 'dash-sched');
    const run = randomUUID().slice(0, 6);
    const ran: string[] = [];
    const ping = defineJob({ name: 'ping', args: z.object({}), handle: (_a, ctx) => void ran.push(ctx.jobId) });
    const slow = defineJob({ name: 'slow-report', args: z.object({}), handle: () => sleep(2_500) });
    const schedules = createSchedules({ store, queueUrl }, ENV);
    const pingId = `ping-${run}`;
    const slowId = `slow-${run}`;
    const nightlyId = `nightly-${run}`;
    await schedules.upsert(defineSchedule({ id: pingId, job: ping, args: {}, every: '2s' }));
    await schedules.upsert(defineSchedule({ id: slowId, job: slow, args: {}, every: '1s' })); // overlap skip: runs 2.5 s
    await schedules.upsert(defineSchedule({ id: nightlyId, job: ping, args: {}, cron: '0 3 * * *', tz: 'Europe/Berlin' }));
    const points: MetricPoint[] = [];
    const worker = start({
      queues: [queueUrl],
      jobs: [ping, slow],
      store,
      schedules: true,
      concurrency: 4,
      metrics: {
        sink: { publish: async (_ns: string, data: readonly MetricPoint[]) => void points.push(...data) },
        flushIntervalMs: 1_000,
      },
    });
    await worker.start();
    await eventually(() => ran.length >= 2, 'two occurrences ran', 20_000);
    await eventually(async () => ((await schedules.get(slowId))?.skipped ?? 0) > 0, 'an overlapped occurrence skipped', 20_000);

    const origin = await serveDashboard({ queues: [queueUrl] });
    const { page, incidents } = await watchedPage(browser, origin);
    await page.goto(`${origin}/ops/schedules`);
    const nightly = page.locator(`tr[data-schedule="${nightlyId}"]`);
    await expect(nightly.textContent()).resolves.toMatch(/03:00:00 Europe\/Berlin/);
    await expect(nightly.textContent()).resolves.toMatch(/T0[12]:00:00Z UTC/); // 03:00 in Berlin is 01:00 or 02:00 UTC
    expect(Number(await page.locator(`tr[data-schedule="${slowId}"] td.n`).textContent())).toBeGreaterThan(0);
    await shoot(page, 'schedules');

    // One schedule: its last occurrences, each linked to its job and how it ended.
    await page.click(`tr[data-schedule="${pingId}"] a[href*="schedules?id="]`);
    await page.locator('[data-outcome="completed"]').first().waitFor({ timeout: 10_000 });
    const done = page.locator('tr[data-occurrence]:has([data-outcome="completed"]) a').first();
    const jobId = await done.textContent();
    expect(jobId).toMatch(new RegExp(`^${pingId}:\\d{10}$`));
    await done.click();
    await page.locator('[data-state="completed"]').waitFor();
    await page.goto(`${origin}/ops/schedules?id=${slowId}`);
    await page.locator('[data-outcome="skipped"]').first().waitFor({ timeout: 10_000 });
    await shoot(page, 'schedule');

    // Pause: nothing more fires; resume; run now sends a job at once.
    await page.goto(`${origin}/ops/schedules?id=${pingId}`);
    await page.click('button[data-action="pause"]');
    await page.locator('[data-notice="paused"]').waitFor();
    await page.locator('[data-state="paused"]').waitFor();
    const pausedS = Math.ceil(Date.now() / 1000);
    await sleep(5_000);
    // None from after the pause (a tick that read it just before may have sent the occurrence of that second).
    expect(ran.filter((j) => j.startsWith(`${pingId}:`) && Number(j.slice(pingId.length + 1)) > pausedS)).toEqual([]);
    await page.click('button[data-action="resume"]');
    await page.locator('[data-notice="resumed"]').waitFor();
    await page.click('button[data-action="trigger"]');
    const sent = await page.locator('[data-notice="triggered"] code').textContent();
    await eventually(() => ran.includes(sent!), 'the job run now ran', 20_000);

    await eventually(
      () => points.some((p) => p.name === 'OccurrenceLateness' && p.dimensions.Job === 'ping'),
      'lateness published under the job',
      10_000,
    );
    await eventually(() => points.some((p) => p.name === 'OccurrencesSkipped' && p.dimensions.Job === 'slow-report'), 'skips published');
    schedules.close();
    expect(incidents).toEqual([]);
  }, 120_000);

  it('read-only: no button on the schedules pages, and their actions answer 403', async () => {
    const { queueUrl } = await freshQueues(sqs, 'dash-sched-ro');
    const ping = defineJob({ name: 'ping', args: z.object({}), handle: () => {} });
    const schedules = createSchedules({ store, queueUrl }, ENV);
    const id = `ro-${randomUUID().slice(0, 6)}`;
    await schedules.upsert(defineSchedule({ id, job: ping, args: {}, cron: '0 9 * * 1', tz: 'America/New_York' }));
    const origin = await serveDashboard({ queues: [queueUrl], readOnly: true });
    const { page, incidents } = await watchedPage(browser, origin);
    await page.goto(`${origin}/ops/schedules`);
    await page.locator(`tr[data-schedule="${id}"]`).waitFor();
    await page.goto(`${origin}/ops/schedules?id=${id}`);
    await page.locator('ol[data-upcoming] li').first().waitFor();
    expect(await page.locator('button[data-action]').count()).toBe(0);
    // Refused for being read-only, even with the browser's own CSRF token.
    const csrf = (await page.context().cookies()).find((c) => c.name === 'sqsjobs_csrf')?.value ?? '';
    for (const action of ['pause', 'resume', 'trigger']) {
      const refused = await page.request.post(`${origin}/ops/schedules/${action}`, { form: { id, csrf } });
      expect(refused.status()).toBe(403);
      expect(await refused.text()).toMatch(/read-only/);
    }
    expect((await schedules.get(id))?.paused).toBe(false);
    schedules.close();
    expect(incidents).toEqual([]);
  });
});
