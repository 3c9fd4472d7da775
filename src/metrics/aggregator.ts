import type { MetricPoint } from '../ports/metrics-sink.js';

/**
 * Distributions in milliseconds (bucketed, see bucketValue). BatchWait: how long a batch's oldest
 * item was held before its flush; OccurrenceLateness: a schedule's occurrence sent − its time.
 */
const TIMING_METRICS = ['WaitTime', 'ProcessTime', 'BatchWait', 'OccurrenceLateness'] as const;
/** Distributions of counts, kept exact: the items per batch handed to a batch handler. */
const SIZE_METRICS = ['BatchSize'] as const;
export const COUNT_METRICS = [
  'Succeeded',
  'Failed',
  'Retried',
  'DeadLettered',
  'DuplicatesSkipped',
  'LockUnavailable',
  'Resent',
  'Deferred',
] as const;
type TimingMetric = (typeof TIMING_METRICS)[number];
type SizeMetric = (typeof SIZE_METRICS)[number];
type DistributionMetric = TimingMetric | SizeMetric;
/**
 * Not among the job counts `sqs-jobs stats` reads: occurrences a schedule skipped, and jobs found
 * paused (each time one is kept waiting or handed back for a pause: the cost a pause runs up).
 */
type OtherCountMetric = 'OccurrencesSkipped' | 'Paused';
type CountMetric = (typeof COUNT_METRICS)[number] | OtherCountMetric;

/** CloudWatch keeps percentiles for Values/Counts data only up to 150 distinct values per datum: one point becomes one datum. */
export const MAX_VALUES_PER_POINT = 150;
/** Bucket width: each bucket spans 10% of its value, so a reported percentile is off by at most ~5%. */
const GROWTH = 1.1;
const LOG_GROWTH = Math.log(GROWTH);

/**
 * The value a timing is reported as: 0 for sub-millisecond, else the geometric middle of its
 * log-scale bucket, to 3 significant digits. 1 ms to 12 hours falls in about 180 buckets; a minute
 * of real traffic uses far fewer.
 */
export function bucketValue(ms: number): number {
  if (!(ms >= 1)) return 0;
  const index = Math.floor(Math.log(ms) / LOG_GROWTH);
  return Number((GROWTH ** (index + 0.5)).toPrecision(3));
}

interface Series {
  readonly job: string;
  readonly queue: string;
  readonly distributions: Map<DistributionMetric, Map<number, number>>;
  readonly counts: Map<CountMetric, number>;
}

/**
 * Per-(job, queue) metrics kept in memory between flushes: timings as bucketed value → count,
 * counters as sums. drain() hands them out as metric points and starts afresh.
 */
export class MetricsAggregator {
  #series = new Map<string, Series>();

  timing(job: string, queue: string, metric: TimingMetric, ms: number): void {
    this.#observe(job, queue, metric, bucketValue(ms));
  }

  size(job: string, queue: string, metric: SizeMetric, n: number): void {
    this.#observe(job, queue, metric, n);
  }

  count(job: string, queue: string, metric: CountMetric, n = 1): void {
    const counts = this.#get(job, queue).counts;
    counts.set(metric, (counts.get(metric) ?? 0) + n);
  }

  get isEmpty(): boolean {
    return this.#series.size === 0;
  }

  drain(timestamp: Date = new Date()): MetricPoint[] {
    const series = this.#series;
    this.#series = new Map();
    const data: MetricPoint[] = [];
    for (const s of series.values()) {
      const dimensions = { Job: s.job, Queue: s.queue };
      for (const [metric, buckets] of s.distributions) {
        const entries = [...buckets.entries()].sort((a, b) => a[0] - b[0]);
        for (let i = 0; i < entries.length; i += MAX_VALUES_PER_POINT) {
          const slice = entries.slice(i, i + MAX_VALUES_PER_POINT);
          data.push({
            kind: 'distribution',
            name: metric,
            dimensions,
            timestamp,
            unit: (SIZE_METRICS as readonly string[]).includes(metric) ? 'Count' : 'Milliseconds',
            values: slice.map(([v]) => v),
            counts: slice.map(([, c]) => c),
          });
        }
      }
      for (const [metric, value] of s.counts) {
        data.push({ kind: 'sum', name: metric, dimensions, timestamp, unit: 'Count', value });
      }
    }
    return data;
  }

  #observe(job: string, queue: string, metric: DistributionMetric, value: number): void {
    const histogram = this.#get(job, queue).distributions;
    let buckets = histogram.get(metric);
    if (buckets === undefined) {
      buckets = new Map();
      histogram.set(metric, buckets);
    }
    buckets.set(value, (buckets.get(value) ?? 0) + 1);
  }

  #get(job: string, queue: string): Series {
    const key = `${job}\u0000${queue}`;
    let s = this.#series.get(key);
    if (s === undefined) {
      s = { job, queue, distributions: new Map(), counts: new Map() };
      this.#series.set(key, s);
    }
    return s;
  }
}
