import { queueAccountOf, queueNameOf } from '../core/queue-url.js';
import { COUNT_METRICS } from '../metrics/aggregator.js';
import type { MetricQuery, MetricsReader } from '../ports/metrics-reader.js';
import type { QueueAdmin } from '../ports/queue-admin.js';
import type { QueuePort } from '../ports/queue.js';
import { spilloverNameFor } from './queues.js';
import { laneNameFor } from '../core/priority.js';

interface QueueDepth {
  readonly name: string;
  readonly url: string;
  readonly visible: number;
  readonly inFlight: number;
  readonly delayed: number;
  /** AWS/SQS ApproximateAgeOfOldestMessage; undefined where the server publishes no SQS metrics (emulators). */
  readonly oldestAgeSeconds: number | undefined;
  /** AWS/SQS NumberOfMessagesSent per minute over the window; undefined likewise. */
  readonly enqueuedPerMinute: number | undefined;
}

interface JobStats {
  readonly job: string;
  readonly queue: string;
  /** Handler starts per minute over the window (WaitTime samples). */
  readonly startedPerMinute: number;
  readonly counts: Readonly<Record<(typeof COUNT_METRICS)[number], number>>;
  readonly waitMs: Percentiles;
  readonly processMs: Percentiles;
  /** Batch jobs only (BatchSize / BatchWait samples in the window): items per handler call, and how long a batch's oldest item was held. */
  readonly batches?: { readonly perMinute: number; readonly size: Percentiles; readonly heldMs: Percentiles };
}

/** Percentiles come from CloudWatch; an emulator without percentile statistics leaves them undefined. */
interface Percentiles {
  readonly p50: number | undefined;
  readonly p99: number | undefined;
  readonly average: number | undefined;
}

export interface Stats {
  readonly at: string;
  readonly windowMinutes: number;
  readonly queues: readonly (QueueDepth & { readonly dlq: QueueDepth | undefined })[];
  readonly jobs: readonly JobStats[];
  /** The jobs that run on events (`subscribers`), by event: each one's queue, when it exists (its depth is in `queues`). */
  readonly events: readonly EventSubscriberStats[];
}

interface EventSubscriberStats {
  readonly event: string;
  readonly job: string;
  readonly queue: string;
  /** undefined: no such queue (`sqs-jobs events create` makes it). */
  readonly queueUrl: string | undefined;
}

/** What stats reads: queue depths and redrive policies from SQS, per-job figures from the metrics. */
export interface StatsSources {
  readonly queue: Pick<QueuePort, 'deadLetterTarget'>;
  readonly admin: QueueAdmin;
  readonly metrics: MetricsReader;
}

interface StatsOptions {
  readonly queueUrls: readonly string[];
  readonly namespace: string;
  readonly windowMinutes: number;
  /** Jobs that run on events, each with its queue's name: their queues are looked up and shown too. */
  readonly subscribers?: readonly { readonly event: string; readonly job: string; readonly queue: string }[];
}

/** Queue depths from SQS, per-job rates and timings from the workers' CloudWatch metrics. */
export async function collectStats(from: StatsSources, o: StatsOptions): Promise<Stats> {
  const now = Date.now();
  // Query a minute past now: servers that cut EndTime to whole seconds (moto) would otherwise
  // miss data stored this second, and CloudWatch accepts an end in the future.
  const end = new Date(now + 60_000);
  const start = new Date(now - o.windowMinutes * 60_000);
  // A queue with a spillover queue (tenant fairness) is shown with it: its depth is the noisy
  // tenants' backlog, and its jobs' wait times (Queue = <name>-spill) are the noisy tenants'.
  // Likewise its tier lanes (priority tiers), each with its own depth and wait.
  const account = o.queueUrls[0] === undefined ? undefined : queueAccountOf(o.queueUrls[0]);
  const events = await Promise.all(
    (o.subscribers ?? []).map(async (s) => ({ ...s, queueUrl: await from.admin.findQueue(s.queue, account) })),
  );
  const asked = [...o.queueUrls, ...events.flatMap((e) => (e.queueUrl === undefined ? [] : [e.queueUrl]))];
  const urls = [...new Set((await Promise.all(asked.map(async (url) => [url, ...(await companionsOf(from.admin, url))]))).flat())];
  const dlqUrls = await Promise.all(urls.map(async (url) => (await from.queue.deadLetterTarget(url))?.deadLetterQueueUrl));
  const queues = await Promise.all(
    urls.map(async (url, i) => {
      // A DLQ shared with a queue listed earlier (a spillover queue's) is shown once, there.
      const dlqUrl = dlqUrls.slice(0, i).includes(dlqUrls[i]) ? undefined : dlqUrls[i];
      const window = { start, end, now, minutes: o.windowMinutes };
      const [main, dlq] = await Promise.all([depth(from, url, window), dlqUrl === undefined ? undefined : depth(from, dlqUrl, window)]);
      return { ...main, dlq };
    }),
  );
  const jobs = (await Promise.all(queues.map((q) => jobStats(from.metrics, o.namespace, q.name, start, end, o.windowMinutes)))).flat();
  return { at: new Date(now).toISOString(), windowMinutes: o.windowMinutes, queues, jobs, events };
}

/** The queues beside `url` that serve its jobs, those that exist: the spillover queue `<name>-spill` and the tier lanes `<name>-high`, `<name>-low`. */
export async function companionsOf(admin: QueueAdmin, url: string): Promise<string[]> {
  const name = queueNameOf(url);
  if (/-(spill|high|low)(\.fifo)?$/.test(name)) return [];
  const names = [laneNameFor(name, 'high'), laneNameFor(name, 'low'), ...(name.endsWith('.fifo') ? [] : [spilloverNameFor(name)])];
  const found = await Promise.all(
    names.map(async (n) => {
      try {
        return await admin.findQueue(n, queueAccountOf(url));
      } catch {
        return undefined; // not allowed to look: show what was asked for
      }
    }),
  );
  return found.filter((u): u is string => u !== undefined);
}

interface Window {
  readonly start: Date;
  readonly end: Date;
  readonly now: number;
  readonly minutes: number;
}

async function depth(from: StatsSources, url: string, { start, end, now, minutes }: Window): Promise<QueueDepth> {
  const counts = await from.admin.counts(url);
  const name = queueNameOf(url);
  const sqsMetric = (metric: string, stat: string, since: Date): MetricQuery => ({
    id: metric.toLowerCase(),
    namespace: 'AWS/SQS',
    metric,
    dimensions: { QueueName: name },
    periodSeconds: periodFor(since, end),
    stat,
  });
  const recent = new Date(now - 300_000);
  const [ages, sends] = await Promise.all([
    from.metrics.query([sqsMetric('ApproximateAgeOfOldestMessage', 'Maximum', recent)], recent, end),
    from.metrics.query([sqsMetric('NumberOfMessagesSent', 'Sum', start)], start, end),
  ]);
  const age = ages.get('approximateageofoldestmessage');
  const sent = sends.get('numberofmessagessent');
  return {
    name,
    url,
    ...counts,
    oldestAgeSeconds: age === undefined ? undefined : Math.max(...age),
    enqueuedPerMinute: sent === undefined ? undefined : sum(sent) / minutes,
  };
}

async function jobStats(
  metrics: MetricsReader,
  namespace: string,
  queue: string,
  start: Date,
  end: Date,
  windowMinutes: number,
): Promise<JobStats[]> {
  const jobs = await metrics.dimensionValues(namespace, { Queue: queue }, 'Job');
  return Promise.all(
    jobs.map(async (job, j) => {
      const period = periodFor(start, end);
      const q = (id: string, metric: string, stat: string): MetricQuery => ({
        id: `${id}${j}`,
        namespace,
        metric,
        dimensions: { Job: job, Queue: queue },
        periodSeconds: period,
        stat,
      });
      const basics = await metrics.query(
        [
          ...COUNT_METRICS.map((m) => q(m.toLowerCase(), m, 'Sum')),
          q('waitn', 'WaitTime', 'SampleCount'),
          q('waitavg', 'WaitTime', 'Average'),
          q('procavg', 'ProcessTime', 'Average'),
          q('bsizen', 'BatchSize', 'SampleCount'),
          q('bsizeavg', 'BatchSize', 'Average'),
          q('bwaitavg', 'BatchWait', 'Average'),
        ],
        start,
        end,
      );
      const percentiles = await metrics.query(
        [
          q('waitp50', 'WaitTime', 'p50'),
          q('waitp99', 'WaitTime', 'p99'),
          q('procp50', 'ProcessTime', 'p50'),
          q('procp99', 'ProcessTime', 'p99'),
          q('bsizep50', 'BatchSize', 'p50'),
          q('bsizep99', 'BatchSize', 'p99'),
          q('bwaitp50', 'BatchWait', 'p50'),
          q('bwaitp99', 'BatchWait', 'p99'),
        ],
        start,
        end,
      );
      const one = (m: Map<string, number[]>, id: string) => {
        const v = m.get(`${id}${j}`);
        return v === undefined || v.length === 0 ? undefined : v[v.length - 1];
      };
      const flushes = sum(basics.get(`bsizen${j}`) ?? []);
      return {
        job,
        queue,
        ...(flushes === 0
          ? {}
          : {
              batches: {
                perMinute: flushes / windowMinutes,
                size: { p50: one(percentiles, 'bsizep50'), p99: one(percentiles, 'bsizep99'), average: one(basics, 'bsizeavg') },
                heldMs: { p50: one(percentiles, 'bwaitp50'), p99: one(percentiles, 'bwaitp99'), average: one(basics, 'bwaitavg') },
              },
            }),
        startedPerMinute: sum(basics.get(`waitn${j}`) ?? []) / windowMinutes,
        counts: Object.fromEntries(COUNT_METRICS.map((m) => [m, sum(basics.get(`${m.toLowerCase()}${j}`) ?? [])])) as JobStats['counts'],
        waitMs: { p50: one(percentiles, 'waitp50'), p99: one(percentiles, 'waitp99'), average: one(basics, 'waitavg') },
        processMs: { p50: one(percentiles, 'procp50'), p99: one(percentiles, 'procp99'), average: one(basics, 'procavg') },
      };
    }),
  );
}

/** One period covering the whole window, rounded up to a whole minute as CloudWatch requires. */
function periodFor(start: Date, end: Date): number {
  return Math.max(60, Math.ceil((end.getTime() - start.getTime()) / 60_000) * 60);
}

function sum(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0);
}
