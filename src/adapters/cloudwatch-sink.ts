import { chunkBySize } from '../core/sqs-batch.js';
import { type CloudWatchClient, type MetricDatum, PutMetricDataCommand } from '@aws-sdk/client-cloudwatch';
import type { MetricPoint, MetricsSink } from '../ports/metrics-sink.js';

const MAX_DATUMS_PER_CALL = 1_000;
/** PutMetricData takes 1 MB per request; stay well under it, the JSON envelope included. */
const MAX_BYTES_PER_CALL = 900_000;

/** A metric point as PutMetricData takes it: a distribution as Values/Counts, a sum as Value. */
export function toDatum(p: MetricPoint): MetricDatum {
  const common = {
    MetricName: p.name,
    Dimensions: Object.entries(p.dimensions).map(([Name, Value]) => ({ Name, Value })),
    Timestamp: p.timestamp,
    Unit: p.unit,
  };
  return p.kind === 'distribution' ? { ...common, Values: [...p.values], Counts: [...p.counts] } : { ...common, Value: p.value };
}

/** Split datums into PutMetricData calls that respect the count and size limits. */
export function chunkDatums(data: readonly MetricDatum[]): MetricDatum[][] {
  return chunkBySize(data, (datum) => JSON.stringify(datum).length + 1, MAX_BYTES_PER_CALL, MAX_DATUMS_PER_CALL);
}

/** PutMetricData, in as few calls as the limits allow. */
export class CloudWatchSink implements MetricsSink {
  constructor(private readonly client: CloudWatchClient) {}

  async publish(namespace: string, points: readonly MetricPoint[]): Promise<void> {
    for (const chunk of chunkDatums(points.map(toDatum))) {
      await this.client.send(new PutMetricDataCommand({ Namespace: namespace, MetricData: chunk }));
    }
  }
}
