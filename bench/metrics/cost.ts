/**
 * What the metrics sinks write for one job type at 10, 1,000 and 100,000 jobs a minute: the points
 * of one flush (what PutMetricData sends, in one call) and the EMF lines and bytes (what the log
 * driver ships and CloudWatch Logs bills as ingestion). `npx tsx bench/metrics/cost.ts`.
 */
import { MetricsAggregator } from '../../src/metrics/aggregator.js';
import { EmfSink } from '../../src/metrics/emf-sink.js';
for (const perMinute of [10, 1_000, 100_000]) {
  const a = new MetricsAggregator();
  for (let i = 0; i < perMinute; i++) {
    a.timing('resize-image', 'jobs', 'WaitTime', 20 + Math.random() * 2_000);
    a.timing('resize-image', 'jobs', 'ProcessTime', 5 + Math.random() * 500);
    a.count('resize-image', 'jobs', 'Succeeded');
  }
  const points = a.drain();
  let bytes = 0;
  let lines = 0;
  await new EmfSink((l) => {
    bytes += l.length + 1;
    lines++;
  }).publish('SqsJobs', points);
  console.log(JSON.stringify({ perMinute, points: points.length, emfLines: lines, emfBytes: bytes }));
}
