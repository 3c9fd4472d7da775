import { EventEmitter } from 'node:events';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { JobInfo, WorkerEvents } from '../../../src/core/job-events.js';
import { MemoryTenantMeter } from '../../../src/testing/memory-tenant-meter.js';
import { TENANTS_PER_REPORT, TenantTally } from '../../../src/worker/tenant-tally.js';

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

const Q = 'http://127.0.0.1:4566/000000000000/jobs';
const SPILL = 'http://127.0.0.1:4566/000000000000/jobs-spill';
const info = (tenant: string | undefined, queueUrl = Q): JobInfo => ({
  jobId: `j-${Math.random()}`,
  jobName: 'report',
  messageId: 'm',
  queueUrl,
  attempt: 1,
  tenant,
});

function setUp(caps: Record<string, number> = {}) {
  const meter = new MemoryTenantMeter();
  const report = vi.spyOn(meter, 'report');
  const events = new EventEmitter();
  const emit = <K extends keyof WorkerEvents>(name: K, ...args: WorkerEvents[K]) => events.emit(name, ...args);
  const running: JobInfo[] = [];
  const tally = new TenantTally(meter, { flushMs: 15_000, caps });
  tally.attach(events as never, () => running);
  return { meter, report, emit, running, tally };
}

describe('TenantTally: what a worker sees of each tenant, reported per queue every flush', () => {
  it('sums starts, waits, deferrals, failures and dead letters per queue and tenant; says caps and the jobs running at the flush', async () => {
    const { meter, report, emit, running } = setUp({ acme: 2 });
    emit('job:start', { ...info('acme'), waitMs: 100 });
    emit('job:start', { ...info('acme'), waitMs: 900 });
    emit('job:start', { ...info('globex'), waitMs: 50 });
    emit('job:start', { ...info('acme', SPILL), waitMs: 4_000 });
    emit('job:deferred', { ...info('acme'), reason: 'cap', delaySeconds: 5, limit: 'tenant-cap' });
    emit('job:failed', { ...info('globex'), error: new Error('x'), processMs: 3, retryDelayMs: 1_000 });
    emit('job:dead-lettered', { ...info('globex'), reason: 'unrecoverable', detail: 'x' });
    emit('job:start', { ...info(undefined), waitMs: 99_000 }); // no tenant: not counted
    running.push(info('acme'), info('acme'), info(undefined));
    expect(report).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(15_000);
    expect(report).toHaveBeenCalledTimes(2); // one per queue
    const [main] = (await meter.read(Q, 0))!;
    expect(main!.periodMs).toBe(15_000);
    expect(main!.tenants).toEqual([
      { tenant: 'acme', cap: 2, started: 2, waitMsTotal: 1_000, waitMsMax: 900, deferred: 1, failed: 0, deadLettered: 0, running: 2 },
      { tenant: 'globex', started: 1, waitMsTotal: 50, waitMsMax: 50, deferred: 0, failed: 1, deadLettered: 1, running: 0 },
    ]);
    expect(main!.others.tenants).toBe(0);
    const [spill] = (await meter.read(SPILL, 0))!;
    expect(spill!.tenants.map((t) => [t.tenant, t.waitMsMax])).toEqual([['acme', 4_000]]);
  });

  it('a quiet period reports only the tenants still running, and an idle worker reports nothing', async () => {
    const { meter, report, emit, running } = setUp();
    emit('job:start', { ...info('acme'), waitMs: 10 });
    running.push(info('acme'));
    await vi.advanceTimersByTimeAsync(15_000);
    await vi.advanceTimersByTimeAsync(15_000); // nothing happened, but acme's job still runs
    const reports = (await meter.read(Q, 0))!;
    expect(reports.map((r) => [r.tenants[0]?.started, r.tenants[0]?.running])).toEqual([
      [1, 1],
      [0, 1],
    ]);
    running.length = 0;
    await vi.advanceTimersByTimeAsync(45_000);
    // One more report says nothing runs now (the page would show the last one's running for 35 s), then none.
    expect(report).toHaveBeenCalledTimes(3);
    const last = (await meter.read(Q, 0))!.at(-1)!;
    expect(last.tenants).toEqual([]);
    expect(last.others.running).toBe(0);
  });

  it('on close, says nothing runs any more on each queue that had jobs running', async () => {
    const { meter, emit, running, tally } = setUp();
    emit('job:start', { ...info('acme', SPILL), waitMs: 10 });
    running.push(info('acme', SPILL));
    await vi.advanceTimersByTimeAsync(15_000);
    running.length = 0; // the worker stops: its jobs end
    await tally.close();
    expect((await meter.read(SPILL, 0))!.map((r) => r.tenants.reduce((n, t) => n + t.running, 0))).toEqual([1, 0]);
  });

  it(`names at most ${TENANTS_PER_REPORT} tenants, those at their cap and those that waited longest first; sums the rest`, async () => {
    const { meter, emit, tally } = setUp({ capped: 1 });
    for (let i = 0; i < 50; i++) emit('job:start', { ...info(`t${i}`), waitMs: i * 10 });
    emit('job:deferred', { ...info('capped'), reason: 'cap', delaySeconds: 5, limit: 'tenant-cap' });
    await tally.close();
    const [r] = (await meter.read(Q, 0))!;
    expect(r!.tenants).toHaveLength(TENANTS_PER_REPORT);
    expect(r!.tenants.slice(0, 3).map((t) => t.tenant)).toEqual(['capped', 't49', 't48']);
    expect(r!.others).toMatchObject({ tenants: 31, started: 31, waitMsMax: 300 });
    const started = r!.tenants.reduce((n, t) => n + t.started, 0) + r!.others.started;
    expect(started).toBe(50);
  });

  it('a meter that rejects loses that report only: no unhandled rejection, later reports go on', async () => {
    const { meter, report, emit, tally } = setUp();
    report.mockRejectedValueOnce(new Error('memcached gone'));
    emit('job:start', { ...info('acme'), waitMs: 1 });
    await vi.advanceTimersByTimeAsync(15_000);
    emit('job:start', { ...info('acme'), waitMs: 2 });
    await tally.close();
    expect((await meter.read(Q, 0))!.map((r) => r.tenants[0]!.waitMsTotal)).toEqual([2]);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(report).toHaveBeenCalledTimes(2); // closed: no timer left
  });
});
