import { type CloudWatchClient, GetMetricDataCommand, ListMetricsCommand } from '@aws-sdk/client-cloudwatch';
import type { MetricQuery, MetricsReader } from '../ports/metrics-reader.js';

/** MetricsReader over CloudWatch (ListMetrics, GetMetricData). */
export class CloudWatchReader implements MetricsReader {
  constructor(private readonly client: CloudWatchClient) {}

  async dimensionValues(namespace: string, where: Readonly<Record<string, string>>, dimension: string): Promise<string[]> {
    const values = new Set<string>();
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListMetricsCommand({
          Namespace: namespace,
          Dimensions: Object.entries(where).map(([Name, Value]) => ({ Name, Value })),
          NextToken: token,
        }),
      );
      for (const m of page.Metrics ?? [])
        for (const d of m.Dimensions ?? []) if (d.Name === dimension && d.Value !== undefined) values.add(d.Value);
      token = page.NextToken;
    } while (token !== undefined);
    return [...values].sort();
  }

  async query(queries: readonly MetricQuery[], start: Date, end: Date): Promise<Map<string, number[]>> {
    try {
      const out = await this.client.send(
        new GetMetricDataCommand({
          MetricDataQueries: queries.map((q) => ({
            Id: q.id,
            MetricStat: {
              Metric: {
                Namespace: q.namespace,
                MetricName: q.metric,
                Dimensions: Object.entries(q.dimensions).map(([Name, Value]) => ({ Name, Value })),
              },
              Period: q.periodSeconds,
              Stat: q.stat,
            },
          })),
          StartTime: start,
          EndTime: end,
        }),
      );
      return new Map((out.MetricDataResults ?? []).filter((r) => (r.Values?.length ?? 0) > 0).map((r) => [r.Id!, r.Values!]));
    } catch {
      return new Map();
    }
  }
}
