import { randomUUID } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDynamoClient } from '../../src/adapters/aws-clients.js';
import { createJobTable } from '../../src/adapters/dynamodb-store.js';
import { defineJob } from '../../src/core/job.js';
import { createPauses } from '../../src/ops/wiring.js';
import { createProducer } from '../../src/producer/producer.js';
import { launchChromium, watchedPage } from '../helpers/browser.js';
import { shoot, useDashboards } from '../helpers/dashboard.js';
import { LOCAL_DYNAMODB, LOCAL_ENV, LOCAL_MEMCACHED, eventually, freshQueues, sleep, sqsClient } from '../helpers/stack.js';
import { recordEvents, useWorkers } from '../helpers/worker.js';

// The dashboard's Pauses page in a real browser (Debian's Chromium, playwright-core): an operator
// pauses the job type that calls a broken API while a worker runs, watches its job wait, and
// resumes it; the audit line names what was paused. Over DynamoDB Local, memcached and LocalStack.
const CREDENTIALS = { AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' };
const ENV = { ...LOCAL_ENV, ...CREDENTIALS };
const sqs = sqsClient();
const dynamo = createDynamoClient({ endpoint: LOCAL_DYNAMODB, region: 'us-east-1' }, {}, CREDENTIALS);
const table = `dash-pause-${randomUUID().slice(0, 8)}`;
const store = { table, endpoint: LOCAL_DYNAMODB };
/** The workers' lockKeyPrefix, which the dashboard is told: where pauses are told to them. */
const PREFIX = `dash-pause-${randomUUID().slice(0, 6)}:`;
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
const serveDashboard = useDashboards({ store, lockKeyPrefix: PREFIX }, ENV);

describe('the dashboard’s pauses', () => {
  it('pauses a job type from the form (its job waits, no dead letter), lists who, why and until when, and resumes it', async () => {
    const { queueUrl } = await freshQueues(sqs, 'dash-pause');
    const ran: string[] = [];
    const charge = defineJob({ name: 'charge-invoice', args: z.object({ n: z.number() }), handle: (_a, ctx) => void ran.push(ctx.jobId) });
    const worker = start({ queues: [queueUrl], jobs: [charge], store, memcached: LOCAL_MEMCACHED, lockKeyPrefix: PREFIX });
    const events = recordEvents(worker);
    await worker.start();
    const audit: { audit: Record<string, unknown> }[] = [];
    const logger = { info: (f: object) => void audit.push(f as never), warn: (f: object) => void audit.push(f as never) };
    const origin = await serveDashboard({ queues: [queueUrl], logger });
    const { page, incidents } = await watchedPage(browser, origin);
    await page.goto(`${origin}/ops/pauses`);
    await page.locator('[data-empty]').waitFor();
    await page.fill('input[name="job"]', 'charge-invoice');
    await page.fill('input[name="for"]', '30m');
    await page.fill('input[name="reason"]', 'payments API down');
    await page.click('button[data-action="pause"]');
    await page.locator('[data-notice="paused"]').waitFor();
    const row = page.locator('tr[data-pause="job:charge-invoice"]');
    await expect(row.textContent()).resolves.toMatch(/job "charge-invoice".*dashboard.*payments API down/s);
    await shoot(page, 'pauses');
    expect(audit.at(-1)?.audit).toMatchObject({ action: 'pause', outcome: 'done', pause: { job: 'charge-invoice', for: '30m' } });

    // The worker sees it within about a second: the job enqueued now waits.
    await sleep(1_500);
    const producer = createProducer({ queueUrl, jobs: [charge] }, ENV);
    const { jobId } = await producer.enqueue(charge, { n: 1 });
    producer.close();
    await eventually(() => events.of('job:waiting').some((e) => e.limit === 'paused'), 'the job waits, paused', 10_000);
    expect(ran).toEqual([]);
    await page.click('tr[data-pause="job:charge-invoice"] button[data-action="resume"]');
    await page.locator('[data-notice="resumed"]').waitFor();
    await eventually(() => ran.includes(jobId), 'the job ran after the resume', 10_000);
    expect(incidents).toEqual([]);
  }, 60_000);

  it('read-only: no form and no button, the actions answer 403 and nothing is paused; bad input is refused naming the field', async () => {
    const { queueUrl } = await freshQueues(sqs, 'dash-pause-ro');
    const readOnly = await serveDashboard({ queues: [queueUrl], readOnly: true });
    const { page, incidents } = await watchedPage(browser, readOnly);
    await page.goto(`${readOnly}/ops/pauses`);
    await page.locator('h1').waitFor();
    expect(await page.locator('button[data-action], form[data-form="pause"]').count()).toBe(0);
    const csrf = (await page.context().cookies()).find((c) => c.name === 'sqsjobs_csrf')?.value ?? '';
    const refused = await page.request.post(`${readOnly}/ops/pauses/pause`, { form: { tenant: 'ro-tenant', csrf } });
    expect(refused.status()).toBe(403);
    const pauses = createPauses({ store }, ENV);
    expect((await pauses.list()).some((p) => p.scope.tenant === 'ro-tenant')).toBe(false);
    const acting = await serveDashboard({ queues: [queueUrl] });
    const other = await watchedPage(browser, acting);
    await other.page.goto(`${acting}/ops/pauses`);
    const token = (await other.page.context().cookies()).find((c) => c.name === 'sqsjobs_csrf')?.value ?? '';
    const bad = await other.page.request.post(`${acting}/ops/pauses/pause`, { form: { job: 'charge invoice', csrf: token } });
    expect(bad.status()).toBe(422);
    expect(await bad.text()).toMatch(/job "charge invoice": must be 1-80 characters/);
    const badFor = await other.page.request.post(`${acting}/ops/pauses/pause`, { form: { tenant: 'x', for: 'soon', csrf: token } });
    expect(badFor.status()).toBe(422);
    expect((await pauses.list()).length).toBe(0);
    pauses.close();
    expect([...incidents, ...other.incidents]).toEqual([]);
  });
});
