import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { pino } from 'pino';
import { MAX_VALUES_PER_DATUM, MetricsAggregator, bucketValue } from '../../src/metrics/aggregator.js';
import { MetricsRecorder } from '../../src/metrics/recorder.js';
import { chunkDatums, toDatum } from '../../src/adapters/cloudwatch-sink.js';
import { EmfSink } from '../../src/metrics/emf-sink.js';
import type { DistributionPoint, MetricPoint, MetricsSink, SumPoint } from '../../src/ports/metrics-sink.js';
import { SafeEmitter } from '../../src/core/events.js';
import type { WorkerEvents } from '../../src/core/job-events.js';

describe('bucketValue', () => {
  it('keeps every value within about 5% and sub-millisecond values at 0', () => {
    for (const ms of [1, 2, 7.5, 10, 99, 1_000, 12_345, 600_000, 43_200_000]) {
      expect(Math.abs(bucketValue(ms) - ms) / ms).toBeLessThan(0.06);
    }
    expect(bucketValue(0)).toBe(0);
    expect(bucketValue(0.4)).toBe(0);
  });

  it('maps 1 ms to 12 hours onto fewer than 200 distinct values', () => {
    const distinct = new Set<number>();
    for (let ms = 1; ms < 43_200_000; ms *= 1.01) distinct.add(bucketValue(ms));
    expect(distinct.size).toBeLessThan(200);
  });
});

describe('MetricsAggregator', () => {
  it('keeps timings as Values/Counts and counters as sums, per job and queue', () => {
    const a = new MetricsAggregator();
    for (const ms of [10, 10, 10, 250]) a.timing('email', 'jobs', 'ProcessTime', ms);
    a.count('email', 'jobs', 'Succeeded');
    a.count('email', 'jobs', 'Succeeded', 2);
    a.count('resize', 'jobs', 'Failed');
    const data = a.drain(new Date(0));
    const process = data.find((d) => d.name === 'ProcessTime') as DistributionPoint;
    expect(process.dimensions).toEqual({ Job: 'email', Queue: 'jobs' });
    expect(process.counts).toEqual([3, 1]);
    expect(process.unit).toBe('Milliseconds');
    expect((data.find((d) => d.name === 'Succeeded') as SumPoint).value).toBe(3);
    expect(data.find((d) => d.name === 'Failed')?.dimensions.Job).toBe('resize');
    expect(a.isEmpty).toBe(true);
    expect(a.drain()).toEqual([]);
  });

  it('never puts more than 150 distinct values in one datum', () => {
    const a = new MetricsAggregator();
    for (let ms = 1; ms < 43_200_000; ms *= 1.05) a.timing('j', 'q', 'WaitTime', ms);
    const data = a.drain() as DistributionPoint[];
    expect(data.length).toBeGreaterThan(1);
    for (const d of data) expect(d.values.length).toBeLessThanOrEqual(MAX_VALUES_PER_DATUM);
    const total = data.reduce((n, d) => n + d.counts.reduce((x, y) => x + y, 0), 0);
    let expected = 0;
    for (let ms = 1; ms < 43_200_000; ms *= 1.05) expected++;
    expect(total).toBe(expected);
  });
});

describe('CloudWatch datums (adapters/cloudwatch-sink.ts)', () => {
  const at = new Date(1_000);
  const datum = (values: number) =>
    toDatum({
      kind: 'distribution',
      name: 'WaitTime',
      dimensions: { Job: 'a', Queue: 'q' },
      timestamp: at,
      unit: 'Milliseconds',
      values: Array.from({ length: values }, (_, i) => 123_456.7 + i),
      counts: Array(values).fill(1_000),
    });

  it('maps a distribution to Values/Counts and a sum to Value, with the dimensions in order', () => {
    expect(datum(2)).toEqual({
      MetricName: 'WaitTime',
      Dimensions: [
        { Name: 'Job', Value: 'a' },
        { Name: 'Queue', Value: 'q' },
      ],
      Timestamp: at,
      Unit: 'Milliseconds',
      Values: [123_456.7, 123_457.7],
      Counts: [1_000, 1_000],
    });
    expect(
      toDatum({ kind: 'sum', name: 'Succeeded', dimensions: { Job: 'a', Queue: 'q' }, timestamp: at, unit: 'Count', value: 4 }),
    ).toMatchObject({
      MetricName: 'Succeeded',
      Unit: 'Count',
      Value: 4,
    });
  });

  it('puts at most 1,000 datums in one call', () => {
    expect(chunkDatums(Array.from({ length: 2_500 }, () => ({ MetricName: 'Succeeded', Value: 1 }))).map((c) => c.length)).toEqual([
      1_000, 1_000, 500,
    ]);
  });

  it('keeps each call under the 1 MB request limit', () => {
    const chunks = chunkDatums(Array.from({ length: 1_000 }, () => datum(150)));
    expect(chunks.length).toBeGreaterThan(1);
    for (const c of chunks) expect(JSON.stringify(c).length).toBeLessThan(1_000_000);
  });
});

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

describe('MetricsRecorder', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const info = { jobId: 'j', jobName: 'email', messageId: 'm', queueUrl: 'http://h/1/jobs', attempt: 1, tenant: undefined };

  function setup(sink: MetricsSink) {
    const events = new SafeEmitter<WorkerEvents>(() => {});
    const recorder = new MetricsRecorder({ sink, namespace: 'NS', flushIntervalMs: 60_000, logger: pino({ level: 'silent' }) });
    recorder.attach(events);
    return { events, recorder };
  }

  it('maps events to metrics and flushes at most once per interval', async () => {
    const published: MetricPoint[][] = [];
    const { events, recorder } = setup({ publish: async (_ns, data) => void published.push([...data]) });
    recorder.start();
    events.emit('job:start', { ...info, waitMs: 40 });
    events.emit('job:succeeded', { ...info, waitMs: 40, processMs: 12 });
    events.emit('job:failed', { ...info, error: new Error('x'), processMs: 5, retryDelayMs: 1_000 });
    events.emit('job:failed', { ...info, error: new Error('x'), processMs: 5, retryDelayMs: undefined });
    events.emit('job:dead-lettered', { ...info, reason: 'unrecoverable', detail: 'x' });
    events.emit('job:duplicate', { ...info, state: 'completed' });
    events.emit('job:duplicate', { ...info, state: 'running' });
    events.emit('job:resent', { ...info, reason: 'retry', delaySeconds: 5 });
    events.emit('job:lock-unavailable', info);
    await vi.advanceTimersByTimeAsync(59_000);
    expect(published).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(published).toHaveLength(1);
    const sums = Object.fromEntries(published[0]!.flatMap((d) => (d.kind === 'sum' ? [[d.name, d.value]] : [])));
    expect(sums).toEqual({ Succeeded: 1, Failed: 2, Retried: 1, DeadLettered: 1, DuplicatesSkipped: 2, LockUnavailable: 1, Resent: 1 });
    const processCounts = (published[0]!.find((d) => d.name === 'ProcessTime') as DistributionPoint).counts.reduce((a, b) => a + b, 0);
    expect(processCounts).toBe(3);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(published).toHaveLength(1); // nothing new, nothing sent
    await recorder.close();
  });

  it('records batch sizes exactly (Count) and batch waits as timings, per job and queue', async () => {
    const published: MetricPoint[][] = [];
    const { events, recorder } = setup({ publish: async (_ns, data) => void published.push([...data]) });
    const batch = { jobName: 'index', key: 'k', queueUrl: 'http://h/1/jobs', size: 500 };
    events.emit('batch:start', { ...batch, heldMs: 1_000 });
    events.emit('batch:start', { ...batch, size: 37, heldMs: 2_000 });
    events.emit('batch:end', { ...batch, failed: 2, processMs: 55 });
    await recorder.close();
    const size = published[0]!.find((d) => d.name === 'BatchSize') as DistributionPoint;
    expect(size.unit).toBe('Count');
    expect([size.values, size.counts]).toEqual([
      [37, 500],
      [1, 1],
    ]);
    const wait = published[0]!.find((d) => d.name === 'BatchWait') as DistributionPoint;
    expect(wait.unit).toBe('Milliseconds');
    expect(wait.counts).toEqual([1, 1]);
    expect(size.dimensions).toEqual({ Job: 'index', Queue: 'jobs' });
  });

  it('tries a failed flush once more, then drops it without throwing', async () => {
    let calls = 0;
    const { events, recorder } = setup({
      publish: async () => {
        calls++;
        throw new Error('CloudWatch unreachable');
      },
    });
    events.emit('job:start', { ...info, waitMs: 1 });
    await expect(recorder.close()).resolves.toBeUndefined();
    expect(calls).toBe(2);
  });
});
