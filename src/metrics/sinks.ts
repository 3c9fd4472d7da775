import { PutMetricDataCommand, type CloudWatchClient, type MetricDatum } from '@aws-sdk/client-cloudwatch';

/** Where flushed metrics go. */
export interface MetricsSink {
  publish(namespace: string, data: readonly MetricDatum[]): Promise<void>;
}

const MAX_DATUMS_PER_CALL = 1_000;
/** PutMetricData takes 1 MB per request; stay well under it, the JSON envelope included. */
const MAX_BYTES_PER_CALL = 900_000;

/** Split datums into PutMetricData calls that respect the count and size limits. */
export function chunkDatums(data: readonly MetricDatum[]): MetricDatum[][] {
  const chunks: MetricDatum[][] = [];
  let current: MetricDatum[] = [];
  let bytes = 0;
  for (const datum of data) {
    const size = JSON.stringify(datum).length + 1;
    if (current.length > 0 && (current.length === MAX_DATUMS_PER_CALL || bytes + size > MAX_BYTES_PER_CALL)) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(datum);
    bytes += size;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

/** PutMetricData, in as few calls as the limits allow. */
export class CloudWatchSink implements MetricsSink {
  constructor(private readonly client: CloudWatchClient) {}

  async publish(namespace: string, data: readonly MetricDatum[]): Promise<void> {
    for (const chunk of chunkDatums(data)) {
      await this.client.send(new PutMetricDataCommand({ Namespace: namespace, MetricData: chunk }));
    }
  }
}

/** EMF allows at most 100 values per metric in one log line. */
const EMF_MAX_VALUES = 100;

/**
 * CloudWatch Embedded Metric Format: one JSON line per datum on a stream (stdout by default).
 * No API calls; on Fargate the awslogs driver ships the lines and CloudWatch extracts the metrics.
 * EMF has no counts, so each bucketed value is repeated by its count, 100 values per line.
 */
export class EmfSink implements MetricsSink {
  constructor(private readonly write: (line: string) => void = (line) => process.stdout.write(`${line}\n`)) {}

  async publish(namespace: string, data: readonly MetricDatum[]): Promise<void> {
    for (const datum of data) {
      const values =
        datum.Values === undefined ? [datum.Value ?? 0] : datum.Values.flatMap((v, i) => Array<number>(datum.Counts?.[i] ?? 1).fill(v));
      const dimensions = Object.fromEntries((datum.Dimensions ?? []).map((d) => [d.Name!, d.Value!]));
      for (let i = 0; i < values.length; i += EMF_MAX_VALUES) {
        const slice = values.slice(i, i + EMF_MAX_VALUES);
        this.write(
          JSON.stringify({
            _aws: {
              Timestamp: (datum.Timestamp ?? new Date()).getTime(),
              CloudWatchMetrics: [
                { Namespace: namespace, Dimensions: [Object.keys(dimensions)], Metrics: [{ Name: datum.MetricName, Unit: datum.Unit }] },
              ],
            },
            ...dimensions,
            [datum.MetricName!]: slice.length === 1 ? slice[0] : slice,
          }),
        );
      }
    }
  }
}
