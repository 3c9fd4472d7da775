import { z } from 'zod';
import { queueAccountOf, queueNameOf } from '../core/queue-url.js';
import { TENANT_REPORTS_KEPT_MINUTES, type TenantMeter, type TenantReport } from '../ports/tenant-meter.js';
import { KeyValueAnswer, type KeyValueCalls } from '../ports/key-values.js';

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

/** A slot is closed (no worker reports to it any more) this long after it ends: its reports can be kept. */
const CLOSED_AFTER_MS = 20_000;
/** Reads in flight at once, per read. */
const PARALLEL_GETS = 16;

/**
 * The tenant meter on a key-value store (a MemcachedLock's memcached, or MemoryKeyValues): one key
 * per queue and 15 seconds, `tenants/<account>/<name>/<slot>` under the lock's key prefix, to
 * which each worker adds its reports as JSON lines (`add`, or `append` once the key exists). A
 * report names at most 20 tenants (3-4 KB; 8 KB with 128-character names), so a key holds the
 * reports of about 300 workers (125 with the longest names); past memcached's item size (1 MB by
 * default) a report is dropped. A reader gets the slots it looks back over, at most 16 at a time,
 * and keeps what it read of closed slots: a page that refreshes reads the last few slots only.
 */
export function tenantMeterOn(m: KeyValueCalls, prefixed: (name: string) => string): TenantMeter {
  const key = (queueUrl: string, slot: number) => prefixed(`tenants/${queueAccountOf(queueUrl) ?? '-'}/${queueNameOf(queueUrl)}/${slot}`);
  /** Closed slots' reports, by key (dropped once older than any read looks). */
  const closed = new Map<string, { readonly slot: number; readonly reports: readonly TenantReport[] }>();
  const readSlot = async (k: string): Promise<TenantReport[]> => {
    const value = await m.call((c) => c.get(k));
    const reports: TenantReport[] = [];
    if (value === null) return reports;
    for (const line of value.split('\n')) {
      if (line === '') continue;
      const parsed = reportSchema.safeParse(safeJson(line));
      if (parsed.success) reports.push(parsed.data);
    }
    return reports;
  };
  return {
    report: async (queueUrl, report) => {
      const k = key(queueUrl, Math.floor(report.at / SLOT_MS));
      const line = `${JSON.stringify(report)}\n`;
      try {
        // The slot's first report adds its key; the others append to it. (Not append first:
        // memcached answers an append to a missing key with an error.)
        m.ok((await m.call((c) => c.add(k, line, EXPIRES_SECONDS))) || (await m.call((c) => c.append(k, line))));
      } catch (error) {
        // memcached answered with an error status: this report is dropped; memcached is up. (A key
        // already full answers the append with false: the report is dropped too.)
        if (error instanceof KeyValueAnswer) return;
        m.failed(undefined, error);
      }
    },
    read: async (queueUrl, sinceMs) => {
      const now = Date.now();
      const last = Math.floor(now / SLOT_MS);
      const oldest = last - (TENANT_REPORTS_KEPT_MINUTES * 60_000) / SLOT_MS;
      for (const [k, c] of closed) if (c.slot < oldest) closed.delete(k);
      const first = Math.max(Math.floor(sinceMs / SLOT_MS), oldest);
      const slots = Array.from({ length: Math.max(0, last - first + 1) }, (_, i) => first + i);
      try {
        const found: (readonly TenantReport[])[] = [];
        for (let i = 0; i < slots.length; i += PARALLEL_GETS) {
          const chunk = slots.slice(i, i + PARALLEL_GETS).map(async (slot) => {
            const k = key(queueUrl, slot);
            const kept = closed.get(k);
            if (kept !== undefined) return kept.reports;
            const reports = await readSlot(k);
            if ((slot + 1) * SLOT_MS + CLOSED_AFTER_MS < now) closed.set(k, { slot, reports });
            return reports;
          });
          found.push(...(await Promise.all(chunk)));
        }
        return m.ok(
          found
            .flat()
            .filter((r) => r.at >= sinceMs)
            .sort((a, b) => a.at - b.at),
        );
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
