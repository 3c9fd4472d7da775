import { z } from 'zod';
import { queueAccountOf, queueNameOf } from '../core/queue-url.js';
import { TENANT_REPORTS_KEPT_MINUTES, type TenantMeter, type TenantReport } from '../ports/tenant-meter.js';
import type { MemcachedCalls } from './memcached-permits.js';

/** One key per queue and 15 seconds (a worker reports every 15 s: about one report each per key). */
const SLOT_MS = 15_000;
/** A slot's key outlives the reads that look back `TENANT_REPORTS_KEPT_MINUTES`. */
const EXPIRES_SECONDS = (TENANT_REPORTS_KEPT_MINUTES + 5) * 60;

const totals = {
  started: z.number().int().nonnegative(),
  waitMsTotal: z.number().nonnegative(),
  waitMsMax: z.number().nonnegative(),
  deferred: z.number().int().nonnegative(),
  failed: z.number().int().nonnegative(),
  deadLettered: z.number().int().nonnegative(),
  running: z.number().int().nonnegative(),
};
/** A stored line is read as this or skipped (written by another version, or cut short). */
const reportSchema = z.object({
  worker: z.string(),
  at: z.number(),
  periodMs: z.number().nonnegative(),
  tenants: z.array(z.object({ tenant: z.string(), cap: z.number().int().positive().optional(), ...totals })),
  others: z.object({ tenants: z.number().int().nonnegative(), ...totals }),
});

/**
 * The tenant meter on a MemcachedLock's memcached: one key per queue and 15 seconds,
 * `tenants/<account>/<name>/<slot>` under the lock's key prefix, to which each worker adds its
 * reports as JSON lines. A reader gets the slots it looks back over (4 a minute). A key holds at
 * most memcached's item size (1 MB by default): a report names at most 20 tenants (about 2 KB;
 * 8 KB with 128-character names), so a queue's reports fit for a few hundred workers; beyond that
 * a report is dropped.
 */
export function memcachedTenantMeter(m: MemcachedCalls, prefixed: (name: string) => string): TenantMeter {
  const key = (queueUrl: string, slot: number) => prefixed(`tenants/${queueAccountOf(queueUrl) ?? '-'}/${queueNameOf(queueUrl)}/${slot}`);
  return {
    report: async (queueUrl, report) => {
      const k = key(queueUrl, Math.floor(report.at / SLOT_MS));
      const line = `${JSON.stringify(report)}\n`;
      try {
        // The minute's first report adds its key; the others append to it. (Not append first:
        // memcached answers an append to a missing key with an error, and an error makes the lock
        // replace its connection, failing the other calls in flight on it.)
        m.ok((await m.call((c) => c.add(k, line, { expires: EXPIRES_SECONDS }))) || (await m.call((c) => c.append(k, line))));
      } catch (error) {
        if (error instanceof Error && /too large/i.test(error.message)) return;
        m.failed(undefined, error);
      }
    },
    read: async (queueUrl, sinceMs) => {
      const now = Date.now();
      const last = Math.floor(now / SLOT_MS);
      const first = Math.max(Math.floor(sinceMs / SLOT_MS), last - (TENANT_REPORTS_KEPT_MINUTES * 60_000) / SLOT_MS);
      const slots = Array.from({ length: Math.max(0, last - first + 1) }, (_, i) => first + i);
      try {
        const values = await Promise.all(slots.map((slot) => m.call((c) => c.get(key(queueUrl, slot)))));
        const reports: TenantReport[] = [];
        for (const { value } of values) {
          if (value === null) continue;
          for (const line of value.toString().split('\n')) {
            if (line === '') continue;
            const parsed = reportSchema.safeParse(safeJson(line));
            if (parsed.success && parsed.data.at >= sinceMs) reports.push(parsed.data);
          }
        }
        return m.ok(reports.sort((a, b) => a.at - b.at));
      } catch (error) {
        return m.failed(undefined, error);
      }
    },
  };
}

function safeJson(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}
