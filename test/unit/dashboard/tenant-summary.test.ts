import { describe, expect, it } from 'vitest';
import { summarizeTenants } from '../../../src/dashboard/tenant-summary.js';
import type { TenantFigures, TenantReport } from '../../../src/ports/tenant-meter.js';

const none = { started: 0, waitMsTotal: 0, waitMsMax: 0, deferred: 0, failed: 0, deadLettered: 0, running: 0 };
const NOW = 1_800_000_000_000;
const report = (worker: string, ago: number, tenants: Partial<TenantFigures>[], othersN = 0): TenantReport => ({
  worker,
  at: NOW - ago,
  periodMs: 15_000,
  tenants: tenants.map((t) => ({ ...none, tenant: 'x', ...t })),
  others: { ...none, tenants: othersN, started: othersN },
});

describe('summarizeTenants: the workers’ reports summed per tenant', () => {
  it('sums counts over every report in the window, queue and spillover queue alike; running from each worker’s last report, if current', () => {
    const view = summarizeTenants(
      new Map([
        [
          'jobs',
          [
            report('a', 50_000, [{ tenant: 'acme', started: 3, waitMsTotal: 300, waitMsMax: 200, running: 2, cap: 2 }]),
            report('a', 20_000, [{ tenant: 'acme', started: 1, waitMsTotal: 900, waitMsMax: 900, running: 2, cap: 2, deferred: 4 }]),
            // b's last report is 40 s old: b has stopped, its running counts no more.
            report('b', 40_000, [{ tenant: 'acme', started: 2, waitMsTotal: 20, waitMsMax: 10, running: 1 }], 5),
          ],
        ],
        ['jobs-spill', [report('a', 5_000, [{ tenant: 'acme', started: 1, waitMsTotal: 5_000, waitMsMax: 5_000 }, { tenant: 'zed' }])]],
      ]),
      NOW - 60 * 60_000,
      NOW,
    );
    const acme = view.tenants.find((t) => t.tenant === 'acme')!;
    expect(acme).toMatchObject({ started: 7, waitMsTotal: 6_220, waitMsMax: 5_000, deferred: 4, running: 2, cap: 2 });
    expect(acme.queues).toEqual(['jobs', 'jobs-spill']);
    expect(acme.startedPerMinute.reduce((n, p) => n + p.value, 0)).toBe(7);
    expect(view.tenants.map((t) => t.tenant).sort()).toEqual(['acme', 'zed']);
    expect(view.others).toMatchObject({ started: 5, mostPerReport: 5 });
    expect(view.workers).toBe(1); // a (its last reports on each queue are current); b is not
  });

  it('counts running from each worker’s last report only, and a report made after the look does not hide the one before', () => {
    const reports = [
      report('a', 25_000, [{ tenant: 'acme', started: 1, running: 3 }]),
      report('a', 10_000, [{ tenant: 'acme', started: 1, running: 1 }]),
      report('a', -2_000, [{ tenant: 'acme', started: 1, running: 9 }]), // made during the read
    ];
    const acme = summarizeTenants(new Map([['jobs', reports]]), NOW - 60_000, NOW).tenants[0]!;
    expect(acme).toMatchObject({ started: 2, running: 1 });
  });

  it('leaves out reports outside the window', () => {
    const view = summarizeTenants(new Map([['jobs', [report('a', 10 * 60_000, [{ tenant: 'old', started: 9 }])]]]), NOW - 5 * 60_000, NOW);
    expect(view.tenants).toEqual([]);
  });
});
