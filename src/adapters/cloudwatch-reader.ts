import { type CloudWatchClient, GetMetricDataCommand, ListMetricsCommand } from '@aws-sdk/client-cloudwatch';
import type { MetricQuery, MetricsReader, Point } from '../ports/metrics-reader.js';

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
    const series = await this.series(queries, start, end);
    return new Map([...series].map(([id, points]) => [id, points.map((p) => p.value)]));
  }

  async series(queries: readonly MetricQuery[], start: Date, end: Date): Promise<Map<string, Point[]>> {
    const out = new Map<string, Point[]>();
    if (queries.length === 0) return out;
    try {
      let token: string | undefined;
      do {
        const page = await this.client.send(
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
            ScanBy: 'TimestampAscending',
            NextToken: token,
          }),
        );
        for (const r of page.MetricDataResults ?? []) {
          const values = r.Values ?? [];
          const times = r.Timestamps ?? [];
          if (r.Id === undefined || values.length === 0) continue;
          const points = out.get(r.Id) ?? [];
          for (const [i, value] of values.entries()) points.push({ at: times[i]?.getTime() ?? Number.NaN, value });
          out.set(r.Id, points);
        }
        token = page.NextToken;
      } while (token !== undefined);
    } catch {
      return new Map();
    }
    // Oldest first, whatever order the server answered in (emulators do not all honour ScanBy).
    for (const points of out.values()) points.sort((a, b) => a.at - b.at);
    return out;
  }
}
