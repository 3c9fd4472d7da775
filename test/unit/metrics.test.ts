import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { MetricDatum } from '@aws-sdk/client-cloudwatch';
import { pino } from 'pino';
import { MAX_VALUES_PER_DATUM, MetricsAggregator, bucketValue } from '../../src/metrics/aggregator.js';
import { MetricsRecorder } from '../../src/metrics/recorder.js';
import { EmfSink, chunkDatums, type MetricsSink } from '../../src/metrics/sinks.js';
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
    const process = data.find((d) => d.MetricName === 'ProcessTime')!;
    expect(process.Dimensions).toEqual([
      { Name: 'Job', Value: 'email' },
      { Name: 'Queue', Value: 'jobs' },
    ]);
    expect(process.Counts).toEqual([3, 1]);
    expect(process.Unit).toBe('Milliseconds');
    expect(data.find((d) => d.MetricName === 'Succeeded')?.Value).toBe(3);
    expect(data.find((d) => d.MetricName === 'Failed')?.Dimensions?.[0]?.Value).toBe('resize');
    expect(a.isEmpty).toBe(true);
    expect(a.drain()).toEqual([]);
  });

  it('never puts more than 150 distinct values in one datum', () => {
    const a = new MetricsAggregator();
    for (let ms = 1; ms < 43_200_000; ms *= 1.05) a.timing('j', 'q', 'WaitTime', ms);
    const data = a.drain();
    expect(data.length).toBeGreaterThan(1);
    for (const d of data) expect(d.Values!.length).toBeLessThanOrEqual(MAX_VALUES_PER_DATUM);
    const total = data.reduce((n, d) => n + d.Counts!.reduce((x, y) => x + y, 0), 0);
    let expected = 0;
    for (let ms = 1; ms < 43_200_000; ms *= 1.05) expected++;
    expect(total).toBe(expected);
  });
});

describe('chunkDatums', () => {
  const datum = (values: number): MetricDatum => ({
    MetricName: 'WaitTime',
    Values: Array.from({ length: values }, (_, i) => 123_456.7 + i),
    Counts: Array(values).fill(1_000),
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
        MetricName: 'WaitTime',
        Unit: 'Milliseconds',
        Timestamp: new Date(1_000),
        Dimensions: [
          { Name: 'Job', Value: 'a' },
          { Name: 'Queue', Value: 'q' },
        ],
        Values: [5, 9],
        Counts: [120, 1],
      },
      {
        MetricName: 'Succeeded',
        Unit: 'Count',
        Timestamp: new Date(1_000),
        Dimensions: [
          { Name: 'Job', Value: 'a' },
          { Name: 'Queue', Value: 'q' },
        ],
        Value: 4,
      },
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
    const published: MetricDatum[][] = [];
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
    const sums = Object.fromEntries(published[0]!.filter((d) => d.Value !== undefined).map((d) => [d.MetricName, d.Value]));
    expect(sums).toEqual({ Succeeded: 1, Failed: 2, Retried: 1, DeadLettered: 1, DuplicatesSkipped: 2, LockUnavailable: 1, Resent: 1 });
    const processCounts = published[0]!.find((d) => d.MetricName === 'ProcessTime')!.Counts!.reduce((a, b) => a + b, 0);
    expect(processCounts).toBe(3);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(published).toHaveLength(1); // nothing new, nothing sent
    await recorder.close();
  });

  it('records batch sizes exactly (Count) and batch waits as timings, per job and queue', async () => {
    const published: MetricDatum[][] = [];
    const { events, recorder } = setup({ publish: async (_ns, data) => void published.push([...data]) });
    const batch = { jobName: 'index', key: 'k', queueUrl: 'http://h/1/jobs', size: 500 };
    events.emit('batch:start', { ...batch, heldMs: 1_000 });
    events.emit('batch:start', { ...batch, size: 37, heldMs: 2_000 });
    events.emit('batch:end', { ...batch, failed: 2, processMs: 55 });
    await recorder.close();
    const size = published[0]!.find((d) => d.MetricName === 'BatchSize')!;
    expect(size.Unit).toBe('Count');
    expect([size.Values, size.Counts]).toEqual([
      [37, 500],
      [1, 1],
    ]);
    const wait = published[0]!.find((d) => d.MetricName === 'BatchWait')!;
    expect(wait.Unit).toBe('Milliseconds');
    expect(wait.Counts).toEqual([1, 1]);
    expect(size.Dimensions).toEqual([
      { Name: 'Job', Value: 'index' },
      { Name: 'Queue', Value: 'jobs' },
    ]);
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
