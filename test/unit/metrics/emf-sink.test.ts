import { describe, expect, it } from 'vitest';
import { EmfSink } from '../../../src/metrics/emf-sink.js';

describe('EmfSink', () => {
  it('writes Embedded Metric Format lines, repeating bucketed values by count, 100 at most per line', async () => {
    const lines: string[] = [];
    const sink = new EmfSink((l) => lines.push(l));
    await sink.publish('SqsJobs', [
      {
        kind: 'distribution',
        name: 'WaitTime',
        unit: 'Milliseconds',
        timestamp: new Date(1_000),
        dimensions: { Job: 'a', Queue: 'q' },
        values: [5, 9],
        counts: [120, 1],
      },
      { kind: 'sum', name: 'Succeeded', unit: 'Count', timestamp: new Date(1_000), dimensions: { Job: 'a', Queue: 'q' }, value: 4 },
    ]);
    const parsed = lines.map((l) => JSON.parse(l));
    expect(parsed).toHaveLength(3);
    expect(parsed[0]._aws).toEqual({
      Timestamp: 1_000,
      CloudWatchMetrics: [{ Namespace: 'SqsJobs', Dimensions: [['Job', 'Queue']], Metrics: [{ Name: 'WaitTime', Unit: 'Milliseconds' }] }],
    });
    expect(parsed[0].Job).toBe('a');
    expect(parsed[0].WaitTime).toHaveLength(100);
    expect(parsed[1].WaitTime).toEqual([...Array(20).fill(5), 9]);
    expect(parsed[2].Succeeded).toBe(4);
  });
});
