import type { MetricPoint, MetricsSink } from '../ports/metrics-sink.js';

/** EMF allows at most 100 values per metric in one log line. */
const EMF_MAX_VALUES = 100;

/**
 * CloudWatch Embedded Metric Format: one JSON line per point on a stream (stdout by default).
 * No API calls; on Fargate the awslogs driver ships the lines and CloudWatch extracts the metrics.
 * EMF has no counts, so each value of a distribution is repeated by its count, 100 values per line.
 */
export class EmfSink implements MetricsSink {
  constructor(private readonly write: (line: string) => void = (line) => process.stdout.write(`${line}\n`)) {}

  async publish(namespace: string, points: readonly MetricPoint[]): Promise<void> {
    for (const p of points) {
      const values = p.kind === 'sum' ? [p.value] : p.values.flatMap((v, i) => Array<number>(p.counts[i] ?? 1).fill(v));
      for (let i = 0; i < values.length; i += EMF_MAX_VALUES) {
        const slice = values.slice(i, i + EMF_MAX_VALUES);
        this.write(
          JSON.stringify({
            _aws: {
              Timestamp: p.timestamp.getTime(),
              CloudWatchMetrics: [
                { Namespace: namespace, Dimensions: [Object.keys(p.dimensions)], Metrics: [{ Name: p.name, Unit: p.unit }] },
              ],
            },
            ...p.dimensions,
            [p.name]: slice.length === 1 ? slice[0] : slice,
          }),
        );
      }
    }
  }
}
