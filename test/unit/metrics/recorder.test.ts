import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SafeEmitter } from '../../../src/core/events.js';
import type { WorkerEvents } from '../../../src/core/job-events.js';
import { MetricsRecorder } from '../../../src/metrics/recorder.js';
import type { DistributionPoint, MetricPoint, MetricsSink } from '../../../src/ports/metrics-sink.js';

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
