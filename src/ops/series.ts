import type { MetricQuery, MetricsReader, Point } from '../ports/metrics-reader.js';

/** Per-minute series over the last `minutes`, for charts: what was sent and finished per queue, runs per job. */
export interface Series {
  readonly from: number;
  readonly to: number;
  /** AWS/SQS NumberOfMessagesSent per minute, by queue name (servers that publish AWS/SQS metrics). */
  readonly sent: ReadonlyMap<string, Point[]>;
  /** Jobs that ended (succeeded, failed, dead-lettered) per minute, by queue name, from the workers' metrics. */
  readonly finished: ReadonlyMap<string, Point[]>;
  /** Handler starts per minute, by `job|queue`, from the workers' metrics. */
  readonly runs: ReadonlyMap<string, Point[]>;
}

const ENDED = ['Succeeded', 'Failed', 'DeadLettered'] as const;

/** One GetMetricData (or a few, paged) for every series the charts need. */
export async function collectSeries(
  metrics: MetricsReader,
  o: {
    readonly queues: readonly string[];
    readonly jobs: readonly { job: string; queue: string }[];
    readonly namespace: string;
    readonly minutes: number;
  },
  now: number = Date.now(),
): Promise<Series> {
  const to = Math.ceil(now / 60_000) * 60_000;
  const from = to - o.minutes * 60_000;
  const queries: MetricQuery[] = [];
  const q = (id: string, namespace: string, metric: string, dimensions: Record<string, string>, stat: string) => {
    queries.push({ id, namespace, metric, dimensions, periodSeconds: 60, stat });
  };
  for (const [i, name] of o.queues.entries()) q(`sent${i}`, 'AWS/SQS', 'NumberOfMessagesSent', { QueueName: name }, 'Sum');
  for (const [j, { job, queue }] of o.jobs.entries()) {
    const dims = { Job: job, Queue: queue };
    for (const [k, metric] of ENDED.entries()) q(`end${j}x${k}`, o.namespace, metric, dims, 'Sum');
    q(`run${j}`, o.namespace, 'WaitTime', dims, 'SampleCount');
  }
  const got = queries.length === 0 ? new Map<string, Point[]>() : await metrics.series(queries, new Date(from), new Date(to + 60_000));
  const sent = new Map(o.queues.map((name, i) => [name, got.get(`sent${i}`) ?? []]));
  const finished = new Map<string, Point[]>();
  const runs = new Map<string, Point[]>();
  o.jobs.forEach(({ job, queue }, j) => {
    runs.set(`${job}|${queue}`, got.get(`run${j}`) ?? []);
    const byMinute = new Map((finished.get(queue) ?? []).map((p) => [p.at, p.value]));
    for (let k = 0; k < ENDED.length; k++)
      for (const p of got.get(`end${j}x${k}`) ?? []) byMinute.set(p.at, (byMinute.get(p.at) ?? 0) + p.value);
    finished.set(
      queue,
      [...byMinute].map(([at, value]) => ({ at, value })).sort((a, b) => a.at - b.at),
    );
  });
  return { from, to, sent, finished, runs };
}
