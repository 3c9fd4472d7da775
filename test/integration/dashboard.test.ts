import { randomUUID } from 'node:crypto';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import express from 'express';
import Fastify from 'fastify';
import { Hono } from 'hono';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDynamoClient } from '../../src/adapters/aws-clients.js';
import { createJobTable } from '../../src/adapters/dynamodb-store.js';
import { SqsQueuePort } from '../../src/adapters/sqs-queue.js';
import { ATTR_DLQ_ERROR, ATTR_DLQ_REASON } from '../../src/core/dead-letter.js';
import { ATTR_JOB } from '../../src/core/envelope.js';
import { UnrecoverableError } from '../../src/core/errors.js';
import { defineJob } from '../../src/core/job.js';
import { createDashboard } from '../../src/dashboard/dashboard.js';
import { fastifyPlugin, honoHandler, nodeHandler } from '../../src/http/index.js';
import { listDeadLetters } from '../../src/ops/dlq-scan.js';
import { createProducer } from '../../src/producer/producer.js';
import { launchChromium, watchedPage } from '../helpers/browser.js';
import { cliDashboard, shoot, useDashboards } from '../helpers/dashboard.js';
import { LOCAL_DYNAMODB, LOCAL_ENV, eventually, freshQueues, queueCounts, sqsClient } from '../helpers/stack.js';
import { recordEvents, useWorkers } from '../helpers/worker.js';

// The dashboard in a real browser (Debian's Chromium, driven by playwright-core), on real SQS
// (LocalStack or moto), DynamoDB Local and memcached, with real workers.
const sqs = sqsClient();
const dynamo = createDynamoClient({ endpoint: LOCAL_DYNAMODB, region: 'us-east-1' }, {}, {});
const table = `dash-${randomUUID().slice(0, 8)}`;
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

const serveDashboard = useDashboards({ store }, LOCAL_ENV);

/** A GET with headers fetch would not send as given (Host): the status. */
function rawStatus(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

const rows = (page: Page) => page.locator('table[data-table="dead-letters"] > tbody > tr').count();
const queueName = (url: string) => url.slice(url.lastIndexOf('/') + 1);

describe('the dashboard', () => {
  it('shows the queues and dead letters SQS holds; a filter narrows them and its URL reproduces it; the filtered set is replayed (dry run, count, confirm) and runs, the rest is purged', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'dash', { maxReceiveCount: 2 });
    let failing = true;
    const report = defineJob({
      name: 'build-report',
      args: z.object({ reportId: z.string() }),
      handle: (a) => {
        if (failing) throw new UnrecoverableError(a.reportId.startsWith('b') ? 'timeout talking to the warehouse' : 'disk full');
      },
    });
    const namespace = `SqsJobsDash/${randomUUID().slice(0, 8)}`;
    const worker = start({ queues: [queueUrl], jobs: [report], metrics: { sink: 'cloudwatch', namespace, flushIntervalMs: 60_000 } });
    const events = recordEvents(worker);
    await worker.start();
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    for (const id of ['a-1', 'a-2', 'a-3']) await producer.enqueue(report, { reportId: id }, { jobId: id, tenant: 'acme' });
    for (const id of ['b-1', 'b-2']) await producer.enqueue(report, { reportId: id }, { jobId: id, tenant: 'globex' });
    producer.close();
    await eventually(() => events.count('job:dead-lettered') === 5, 'five jobs dead-lettered');

    const origin = await serveDashboard({ queues: [queueUrl], namespace });
    const { page, incidents } = await watchedPage(browser, origin);
    await page.goto(`${origin}/ops/`);
    const dlqRow = page.locator(`tr[data-queue="${queueName(dlqUrl)}"]`);
    await expect(dlqRow.locator('[data-alarm="dlq"]').textContent()).resolves.toContain('5 dead letters');
    await expect(page.locator(`tr[data-queue="${queueName(queueUrl)}"]`).count()).resolves.toBe(1);

    await page.click('a[href$="/ops/dead-letters"]');
    expect(await rows(page)).toBe(5);
    await page.fill('input[name="tenant"]', 'acme');
    await page.click('form.filters button[type="submit"]');
    await page.waitForURL(/tenant=acme/);
    expect(await rows(page)).toBe(3);
    const shared = page.url();
    const again = await browser.newPage();
    await again.goto(shared);
    expect(await rows(again)).toBe(3);
    expect(await again.inputValue('input[name="tenant"]')).toBe('acme');
    await again.close();
    // A row opens its message: the args pretty-printed, every sqsjobs-* attribute.
    const first = page.locator('table[data-table="dead-letters"] > tbody > tr').first();
    await first.locator('summary').click();
    await expect(first.locator('pre[data-body]').textContent()).resolves.toMatch(/"reportId": "a-\d"/);
    await expect(first.textContent()).resolves.toContain('sqsjobs-dlq-reason');
    await shoot(page, 'dead-letters');

    // Replay the filtered set: a dry run that counts first, a confirmation naming the count.
    await page.click('button[data-action="replay"]');
    await expect(page.locator('[data-dry-run]').getAttribute('data-dry-run')).resolves.toBe('3');
    expect((await queueCounts(sqs, dlqUrl)).visible).toBe(5); // the dry run moved nothing
    failing = false;
    await page.click('button[data-confirm="3"]');
    await expect(page.locator('[data-done]').getAttribute('data-done')).resolves.toBe('3');
    await eventually(() => events.count('job:succeeded') === 3, 'the three replayed jobs to run');
    expect(
      events
        .of('job:succeeded')
        .map((e) => e.jobId)
        .sort(),
    ).toEqual(['a-1', 'a-2', 'a-3']);
    const left = await listDeadLetters(new SqsQueuePort(sqs), dlqUrl);
    expect(left.map((l) => l.jobId).sort()).toEqual(['b-1', 'b-2']);

    // Purge the rest by its error text: dry run 2, confirm, gone.
    await page.goto(`${origin}/ops/dead-letters?error=warehouse`);
    expect(await rows(page)).toBe(2);
    await page.click('button[data-action="purge"]');
    await expect(page.locator('[data-dry-run]').getAttribute('data-dry-run')).resolves.toBe('2');
    await page.click('button[data-confirm="2"]');
    await expect(page.locator('[data-done]').getAttribute('data-done')).resolves.toBe('2');
    await eventually(async () => {
      const c = await queueCounts(sqs, dlqUrl);
      return c.visible + c.inFlight === 0;
    }, 'the DLQ to be empty');
    expect(events.count('job:succeeded')).toBe(3); // purged jobs did not run

    // The workers' metrics (flushed at stop) on the job types page, with a chart of the last hour.
    await worker.stop();
    await page.click('a[href$="/ops/job-types"]');
    const jobRow = page.locator('tr[data-job="build-report"]');
    await expect(jobRow.locator('td').nth(4).textContent()).resolves.toBe('3'); // succeeded
    await expect(jobRow.locator('td').nth(7).textContent()).resolves.toBe('5'); // dead-lettered
    expect(Number(await jobRow.locator('svg.spark').getAttribute('data-points'))).toBe(60); // a point a minute, none missing
    await shoot(page, 'job-types');
    // The overview charts what was waiting (its own samples) and what was finished per minute.
    await page.click('a[href$="/ops/"]');
    expect(
      Number(await page.locator(`tr[data-queue="${queueName(dlqUrl)}"] svg.spark`).getAttribute('data-points')),
    ).toBeGreaterThanOrEqual(2);
    const finished = page.locator(`tr[data-throughput="${queueName(queueUrl)}"] td`).nth(4);
    expect(Number(await finished.locator('svg.spark').getAttribute('data-points'))).toBe(60);
    await shoot(page, 'overview');
    expect(incidents).toEqual([]);
  });

  it('shows each tenant as the workers saw it: the one at its cap, its jobs over the cap, its spillover; the noisiest first; a filter and an order in the URL', async () => {
    const { queueUrl, spilloverQueueUrl } = await freshQueues(sqs, 'dash-ten', { spillover: true });
    const lockKeyPrefix = `dash-ten-${randomUUID().slice(0, 8)}:`;
    const hostile = '"><img/src=x/onerror=alert(1)>';
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const render = defineJob({
      name: 'render',
      args: z.object({ fail: z.boolean().default(false) }),
      handle: async (a, ctx) => {
        if (a.fail) throw new UnrecoverableError('the template is broken');
        if (ctx.tenant === 'noisy') await gate; // noisy's jobs hold their permits: it stays at its cap
      },
    });
    const options = {
      queues: [
        { url: queueUrl, weight: 4 },
        { url: spilloverQueueUrl!, weight: 1 },
      ],
      jobs: [render],
      lockKeyPrefix,
      concurrency: 6,
      tenantCaps: { noisy: 2 },
      capDelaySeconds: 3,
    };
    const worker = start(options);
    const events = recordEvents(worker);
    await worker.start();
    // Its own key prefix: allowances are per tenant, and another run of the suite may share the memcached.
    const producer = createProducer(
      { queueUrl, lockKeyPrefix: `dash-${randomUUID()}:`, spillover: { queueUrl: spilloverQueueUrl!, ratePerSecond: 1, burst: 3 } },
      LOCAL_ENV,
    );
    await producer.enqueueMany(
      render,
      Array.from({ length: 8 }, () => ({})),
      { tenant: 'noisy' },
    ); // 3 to the queue, 5 spilled
    for (const tenant of ['quiet-1', 'quiet-2']) await producer.enqueue(render, {}, { tenant });
    await producer.enqueue(render, { fail: true }, { tenant: hostile });
    producer.close();
    await eventually(
      () => events.count('job:waiting') > 0 && events.count('job:dead-lettered') === 1,
      'a job over its cap and a dead letter',
    );

    const origin = await serveDashboard({ queues: [queueUrl], lockKeyPrefix, windowMinutes: 5 });
    const { page, incidents } = await watchedPage(browser, origin);
    const noisy = page.locator('tr[data-tenant="noisy"]');
    // The worker reports every 15 s: the page shows noisy at its cap once a report says so.
    await eventually(
      async () => {
        await page.goto(`${origin}/ops/tenants`);
        return (await noisy.locator('[data-at-cap]').count()) === 1;
      },
      'noisy at its cap on the tenants page',
      40_000,
    );
    await expect(page.locator('h1').textContent()).resolves.toBe('Tenants, last 5 min');
    const cells = async (row: typeof noisy) => (await row.locator('td').allTextContents()).map((t) => t.trim());
    const [, badges, , , , , runningNow, cap, deferred] = await cells(noisy);
    expect(badges).toContain('at its cap');
    expect(badges).toContain('spilled');
    expect([runningNow, cap]).toEqual(['2', '2']);
    expect(Number(deferred)).toBeGreaterThan(0);
    await expect(page.locator('[data-capped]').getAttribute('data-capped')).resolves.toBe('1');
    // The hostile tenant's name is text, with a link to its dead letters.
    const odd = page.locator('tr[data-tenant]').filter({ hasText: 'onerror' });
    await expect(odd.locator('code').textContent()).resolves.toBe(hostile);
    await expect(odd.locator('td').nth(10).textContent()).resolves.toBe('1');
    await expect(odd.locator('a').getAttribute('href')).resolves.toBe(`/ops/dead-letters?${new URLSearchParams({ tenant: hostile })}`);
    // The spillover queue's depth, from SQS.
    const spill = page.locator(`tr[data-spill="${queueName(queueUrl)}"]`);
    await expect(spill.textContent()).resolves.toContain(queueName(spilloverQueueUrl!));
    // Ordered by jobs over the cap, noisy first; a filter narrows; the URL reproduces both.
    await page.selectOption('select[name="sort"]', 'deferred');
    await page.click('form.filters button[type="submit"]');
    await page.waitForURL(/sort=deferred/);
    await expect(page.locator('tr[data-tenant]').first().getAttribute('data-tenant')).resolves.toBe('noisy');
    await shoot(page, 'tenants');
    await page.goto(`${origin}/ops/tenants?tenant=QUIET&sort=started`);
    await expect(page.locator('tr[data-tenant]').evaluateAll((rs) => rs.map((r) => r.getAttribute('data-tenant')).sort())).resolves.toEqual(
      ['quiet-1', 'quiet-2'],
    );
    await expect(page.inputValue('input[name="tenant"]')).resolves.toBe('QUIET');
    release();
    await eventually(() => events.count('job:succeeded') === 10, 'every job but the broken one to run', 60_000);
    expect(incidents).toEqual([]);
  });

  it('looks a tracked job up by id with live progress, and cancels it: the running handler is signalled', async () => {
    const { queueUrl } = await freshQueues(sqs, 'dash-job');
    const aborted: string[] = [];
    const exportJob = defineJob({
      name: 'export',
      args: z.object({ rows: z.number() }),
      handle: async (a, ctx) => {
        ctx.progress(a.rows / 4, a.rows);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 30_000);
          ctx.signal.addEventListener('abort', () => {
            clearTimeout(timer);
            aborted.push(ctx.jobId);
            resolve();
          });
        });
        ctx.signal.throwIfAborted();
      },
    });
    const worker = start({ queues: [queueUrl], jobs: [exportJob], store, lockKeyPrefix: 'sqsjobs:', progressIntervalMs: 100 });
    await worker.start();
    const producer = createProducer({ queueUrl, store }, LOCAL_ENV);
    const jobId = `export-${randomUUID().slice(0, 8)}`;
    await producer.enqueue(exportJob, { rows: 400 }, { jobId, track: true });
    producer.close();

    const origin = await serveDashboard({ queues: [queueUrl], refreshSeconds: 1 });
    const { page, incidents } = await watchedPage(browser, origin);
    await page.goto(`${origin}/ops/job`);
    await page.fill('input[name="id"]', jobId);
    await page.click('form.filters button[type="submit"]');
    // Live: the page refreshes itself until the job runs and reports progress.
    await page.locator('[data-state="running"]').waitFor({ timeout: 20_000 });
    await page.locator('[data-progress="100"]').waitFor({ timeout: 20_000 });
    await expect(page.locator('progress').getAttribute('value')).resolves.toBe('25');
    await shoot(page, 'job');
    await page.click('button[data-action="cancel"]');
    await expect(page.locator('[data-cancel]').getAttribute('data-cancel')).resolves.toBe('cancelled');
    await eventually(() => aborted.includes(jobId), 'the handler to be signalled');
    await page.locator('[data-state="cancelled"]').waitFor({ timeout: 20_000 });
    await page.goto(`${origin}/ops/job?id=no-such-job`);
    await page.locator('[data-not-found]').waitFor();
    expect(incidents).toEqual([]);
  });

  it('read-only: no button shows and every action answers 403; an action without the CSRF token, or from another site, is refused', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'dash-ro');
    await sqs.send(new SendMessageCommand({ QueueUrl: dlqUrl, MessageBody: '{"v":1,"id":"ro-1","job":"x","args":{}}' }));
    const readOnly = await serveDashboard({ queues: [queueUrl], readOnly: true });
    const ro = await watchedPage(browser, readOnly);
    await ro.page.goto(`${readOnly}/ops/dead-letters`);
    expect(await rows(ro.page)).toBe(1);
    expect(await ro.page.locator('button[data-action]').count()).toBe(0);
    await expect(ro.page.locator('header').textContent()).resolves.toContain('read-only');
    expect(await ro.page.locator('input[name="csrf"]').count()).toBe(0); // no form that acts
    // Even with the cookie's own token, an action is refused.
    const cookie = (await ro.page.context().cookies()).find((c) => c.name === 'sqsjobs_csrf')?.value;
    expect(cookie).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const refused = await ro.page.request.post(`${readOnly}/ops/dead-letters/purge`, { form: { dlq: queueName(dlqUrl), csrf: cookie! } });
    expect(refused.status()).toBe(403);
    expect(await refused.text()).toMatch(/read-only/);

    const open = await serveDashboard({ queues: [queueUrl] });
    const rw = await watchedPage(browser, open);
    await rw.page.goto(`${open}/ops/dead-letters`);
    const csrf = await rw.page.locator('input[name="csrf"]').first().getAttribute('value');
    expect(csrf).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const form = { dlq: queueName(dlqUrl) };
    expect((await rw.page.request.post(`${open}/ops/dead-letters/replay`, { form })).status()).toBe(403);
    expect((await rw.page.request.post(`${open}/ops/dead-letters/replay`, { form: { ...form, csrf: 'x'.repeat(43) } })).status()).toBe(403);
    const foreign = await rw.page.request.post(`${open}/ops/dead-letters/replay`, {
      form: { ...form, csrf: csrf! },
      headers: { origin: 'http://evil.example' },
    });
    expect(foreign.status()).toBe(403);
    const dry = await rw.page.request.post(`${open}/ops/dead-letters/purge`, { form: { ...form, csrf: csrf! } });
    expect(dry.status()).toBe(200);
    const dryPage = await dry.text();
    expect(dryPage).toContain('data-dry-run="1"');
    expect((await queueCounts(sqs, dlqUrl)).visible + (await queueCounts(sqs, dlqUrl)).inFlight).toBe(1);
    // The confirmation acts once: it answers with a redirect to the result, and the same confirmation again is refused.
    const confirmation = /name="confirmation" value="([^"]+)"/.exec(dryPage)?.[1];
    expect(confirmation).toBeDefined();
    const done = await rw.page.request.post(`${open}/ops/dead-letters/purge`, {
      form: { confirmation: confirmation!, csrf: csrf! },
      maxRedirects: 0,
    });
    expect(done.status()).toBe(303);
    expect(done.headers().location).toMatch(/^\/ops\/dead-letters\/result\?id=/);
    const result = await rw.page.request.get(`${open}${done.headers().location}`);
    expect(await result.text()).toContain('data-done="1"');
    const again = await rw.page.request.post(`${open}/ops/dead-letters/purge`, { form: { confirmation: confirmation!, csrf: csrf! } });
    expect(again.status()).toBe(409);
    expect((await queueCounts(sqs, dlqUrl)).visible).toBe(0);
    expect([...ro.incidents, ...rw.incidents]).toEqual([]);
  });

  it('shows hostile dead letters as text: no script runs, no dialog opens, no element is injected', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'dash-xss');
    const hostile = [
      {
        body: JSON.stringify({
          v: 1,
          id: 'x-1',
          job: '<script>window.__pwned=1</script>',
          tenant: '"><img src=x onerror=alert(1)>',
          args: { url: 'javascript:alert(2)', note: '\u202Egnp.exe', zw: 'a\u200Bb' },
        }),
        job: '<img src=x onerror=alert(3)>',
        error: '</pre></details><script>alert(4)</script>',
        reason: '"><svg onload=alert(5)>',
      },
      { body: '<script>alert(6)</script>{not json', job: "';alert(7);//", error: '<iframe src="javascript:alert(8)">', reason: 'x' },
    ];
    for (const h of hostile) {
      await sqs.send(
        new SendMessageCommand({
          QueueUrl: dlqUrl,
          MessageBody: h.body,
          MessageAttributes: {
            [ATTR_JOB]: { DataType: 'String', StringValue: h.job },
            [ATTR_DLQ_ERROR]: { DataType: 'String', StringValue: h.error },
            [ATTR_DLQ_REASON]: { DataType: 'String', StringValue: h.reason },
          },
        }),
      );
    }
    const origin = await serveDashboard({ queues: [queueUrl] });
    const { page, incidents } = await watchedPage(browser, origin);
    // The filter itself is reflected in the page: hostile there too.
    await page.goto(`${origin}/ops/dead-letters?error=${encodeURIComponent('"><script>alert(9)</script>')}`);
    expect(await page.inputValue('input[name="error"]')).toBe('"><script>alert(9)</script>');
    expect(await page.locator('main script, main img, main svg, main iframe').count()).toBe(0);
    await page.goto(`${origin}/ops/dead-letters`);
    expect(await rows(page)).toBe(2);
    for (const summary of await page.locator('table[data-table="dead-letters"] summary').all()) await summary.click();
    const text = (await page.locator('main').textContent()) ?? '';
    expect(text).toContain('<script>window.__pwned=1</script>');
    expect(text).toContain('"><img src=x onerror=alert(1)>');
    expect(text).toContain('</pre></details><script>alert(4)</script>');
    expect(text).toContain('<U+202E>gnp.exe'); // a right-to-left override is shown, not obeyed
    expect(await page.locator('main script, main img, main svg, main iframe').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
    // Actions on the hostile set: the confirmation page shows the filter as text too.
    await page.goto(`${origin}/ops/dead-letters?job=${encodeURIComponent('<img src=x onerror=alert(3)>')}`);
    expect(await rows(page)).toBe(1);
    await page.click('button[data-action="purge"]');
    await expect(page.locator('[data-dry-run]').textContent()).resolves.toContain('<img src=x onerror=alert(3)>');
    expect(incidents).toEqual([]);
  });

  it('mounts in Express (with express.urlencoded() before it), Fastify and Hono: pages load, a dry run and its confirmation act', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'dash-mount');
    const dashboard = createDashboard({ queues: [queueUrl], basePath: '/ops', refreshSeconds: 0 }, LOCAL_ENV);
    const mounts: Record<string, () => Promise<{ url: string; close: () => Promise<unknown> }>> = {
      express: async () => {
        const app = express();
        app.use(express.urlencoded({ extended: false }));
        app.get('/health', (_req, res) => {
          res.send('ok');
        });
        app.use(nodeHandler(dashboard));
        const server = createServer(app);
        await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
        return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((r) => server.close(r)) };
      },
      fastify: async () => {
        const app = Fastify();
        app.get('/health', async () => 'ok');
        await app.register(fastifyPlugin(dashboard));
        await app.listen({ host: '127.0.0.1', port: 0 });
        return { url: `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, close: () => app.close() };
      },
      hono: async () => {
        const app = new Hono();
        app.get('/health', (c) => c.text('ok'));
        app.all('/ops', honoHandler(dashboard));
        app.all('/ops/*', honoHandler(dashboard));
        const server = await new Promise<Server>((resolve) => {
          const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s as Server));
        });
        return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((r) => server.close(r)) };
      },
    };
    try {
      for (const [name, mount] of Object.entries(mounts)) {
        await sqs.send(
          new SendMessageCommand({ QueueUrl: dlqUrl, MessageBody: JSON.stringify({ v: 1, id: `m-${name}`, job: 'x', args: {} }) }),
        );
        const { url, close } = await mount();
        const { page, incidents } = await watchedPage(browser, url);
        try {
          expect(await (await fetch(`${url}/health`)).text(), name).toBe('ok');
          await page.goto(`${url}/ops`);
          await expect(page.locator('h1').first().textContent(), name).resolves.toBe('Queues');
          await page.goto(`${url}/ops/dead-letters?id=m-${name}`);
          expect(await rows(page), name).toBe(1);
          await page.click('button[data-action="purge"]');
          await expect(page.locator('[data-dry-run]').getAttribute('data-dry-run'), name).resolves.toBe('1');
          await page.click('button[data-confirm="1"]');
          await expect(page.locator('[data-done]').getAttribute('data-done'), name).resolves.toBe('1');
          expect(page.url(), name).toMatch(/\/ops\/dead-letters\/result\?id=/);
          expect(incidents, name).toEqual([]);
        } finally {
          await page.context().close();
          await close();
        }
      }
    } finally {
      dashboard.close();
    }
  });

  it('`sqs-jobs dashboard` serves on 127.0.0.1 until Ctrl-C', async () => {
    const { queueUrl } = await freshQueues(sqs, 'dash-cli');
    const { url, out, stop } = await cliDashboard(['--queue', queueUrl, '--read-only'], { ...process.env, ...LOCAL_ENV });
    try {
      expect(out()).toContain('(read-only)');
      const res = await fetch(url);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(await res.text()).toContain(queueName(queueUrl));
      // Another name pointed at this address (DNS rebinding) is not answered; nor a sub-resource another site's page asked for.
      expect(await rawStatus(url, { host: `rebind.example:${new URL(url).port}` })).toBe(421);
      expect(await rawStatus(url, { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors' })).toBe(403);
      expect(await rawStatus(url, { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' })).toBe(200);
      expect(await rawStatus(url, { host: `localhost:${new URL(url).port}` })).toBe(200);
    } finally {
      expect(await stop()).toBe(0);
    }
  });
});
