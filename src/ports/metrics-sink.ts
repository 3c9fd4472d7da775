/**
 * The metrics sink port: where a worker's per-job metrics go at each flush. In sqs-jobs' words;
 * src/adapters/cloudwatch-sink.ts sends them with PutMetricData, src/metrics/emf-sink.ts writes
 * them as CloudWatch Embedded Metric Format lines, and `metrics: { sink }` takes your own.
 */

type MetricUnit = 'Milliseconds' | 'Count';

/** One metric of one job on one queue, over one flush interval. */
interface PointBase {
  readonly name: string;
  /** `Job` and `Queue`. */
  readonly dimensions: Readonly<Record<string, string>>;
  readonly timestamp: Date;
  readonly unit: MetricUnit;
}

/** A distribution: each distinct value seen, and how many times (values ascending; at most 150 per point). */
export interface DistributionPoint extends PointBase {
  readonly kind: 'distribution';
  readonly values: readonly number[];
  readonly counts: readonly number[];
}

/** A counter: the sum over the interval. */
export interface SumPoint extends PointBase {
  readonly kind: 'sum';
  readonly value: number;
}

/** One point a sink publishes: a distribution or a sum. */
export type MetricPoint = DistributionPoint | SumPoint;

/** The metrics sink port (see above): the worker's `metrics: { sink }` option takes your own. */
export interface MetricsSink {
  /** Publish one flush's points; a rejection is retried once, then the interval is dropped (and logged). */
  publish(namespace: string, points: readonly MetricPoint[]): Promise<void>;
}
