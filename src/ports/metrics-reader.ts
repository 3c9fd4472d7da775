/**
 * The metrics reader port: what `sqs-jobs stats` reads back of the metrics the workers published
 * (and of the queue's own metrics, where the server has them). src/adapters/cloudwatch-reader.ts
 * implements it over CloudWatch.
 */

/** One statistic of one metric over a window, as a single period. */
export interface MetricQuery {
  /** How its answer is keyed; lower-case letters and digits, starting with a letter. */
  readonly id: string;
  readonly namespace: string;
  readonly metric: string;
  readonly dimensions: Readonly<Record<string, string>>;
  readonly periodSeconds: number;
  /** Sum, Average, Maximum, SampleCount, or a percentile such as p99. */
  readonly stat: string;
}

/** One value of a series: the start of its period (ms since the epoch) and the statistic over it. */
export interface Point {
  readonly at: number;
  readonly value: number;
}

/** The metrics reader port (see above): `sqs-jobs stats` and the dashboard read through it; CloudWatchReader (sqs-jobs/adapters) implements it. */
export interface MetricsReader {
  /** The values `dimension` takes on the metrics in `namespace` that carry every dimension in `where`. */
  dimensionValues(namespace: string, where: Readonly<Record<string, string>>, dimension: string): Promise<string[]>;
  /** Each query's values between `start` and `end`, by id; a query with no data is left out, and a server that cannot answer gives none. */
  query(queries: readonly MetricQuery[], start: Date, end: Date): Promise<Map<string, number[]>>;
  /** Each query's values over time (one per period that has data, oldest first), by id; the same rules as query. */
  series(queries: readonly MetricQuery[], start: Date, end: Date): Promise<Map<string, Point[]>>;
}
