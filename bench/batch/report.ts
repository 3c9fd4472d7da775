/** The tables of scenarios 1 and 2: figures per contender, and sqs-jobs batch's ratios to the others. */
import { CALL_MS, ITEM_MS } from './downstream.js';
import { breakdown, fmt } from './stats.js';
import { type ContenderId, type ContenderResult, LABELS, THROUGHPUT } from './throughput.js';

/** The SQS calls per item a batch job should stay under. */
export const SQS_TARGET = 0.25;

export function throughputLines(results: readonly ContenderResult[]): string[] {
  const by = new Map(results.map((r) => [r.id, r]));
  const a = by.get('batch');
  const lines = [
    `${results[0]?.items ?? 0} items over ${THROUGHPUT.keys} keys; downstream ${CALL_MS} ms + ${ITEM_MS} ms per item per call; concurrency ${THROUGHPUT.concurrency} (sqs-jobs) / ${THROUGHPUT.consumers} Consumers (sqs-consumer); long-poll wait ${THROUGHPUT.waitTimeSeconds} s; sqs-jobs with the memcached dedupe lock`,
    '',
    '| contender | downstream calls / item | items / call (mean, p50, max) | wall s | items / s | CPU µs / item | ElasticMQ, memcached CPU µs / item | event loop busy | SQS calls / item |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const r of results) {
    const s = r.itemsPerCall;
    lines.push(
      `| ${LABELS[r.id]} | ${fmt(r.downstreamCallsPerItem, 4)} | ${fmt(s.mean, 1)}, ${s.p50}, ${s.max} | ${fmt(r.wallMs / 1000, 1)} | ${fmt(r.itemsPerSecond, 0)} | ${fmt(r.cpuMicrosPerItem, 0)} | ${serverCpu(r)} | ${fmt(r.eventLoopBusy * 100, 0)}% | ${fmt(r.sqsCallsPerItem, 3)} |`,
    );
  }
  if (a === undefined) return lines; // BATCH_CONTENDERS left (a) out: nothing to compare with
  const n = a.items;
  lines.push('', 'sqs-jobs batch (a) against:');
  for (const id of ['batch-1r', 'batch-4r', 'per-item', 'consumer-per-key', 'consumer-whole-batch'] as ContenderId[]) {
    const o = by.get(id);
    if (o === undefined) continue;
    lines.push(
      `  ${LABELS[id]}: ${fmt(o.downstreamCallsPerItem / a.downstreamCallsPerItem, 1)}x fewer downstream calls; (a) took ${fmt(a.wallMs / o.wallMs, 2)}x its wall time, ${fmt(a.cpuMicrosPerItem / o.cpuMicrosPerItem, 2)}x its CPU per item (${fmt(withServers(a) / withServers(o), 2)}x with the servers') and ${fmt(a.sqsCallsPerItem / o.sqsCallsPerItem, 2)}x its SQS calls`,
    );
  }
  const repeated = results.filter((r) => r.repeated > 0);
  if (repeated.length > 0) lines.push(`  items handled more than once: ${repeated.map((r) => `${r.id} ${r.repeated}`).join(', ')}`);
  lines.push(
    '',
    'CPU µs / item: this process, i.e. the contender plus the counting proxy that every contender shares',
    'ElasticMQ, memcached CPU µs / item: what those servers spent meanwhile (those this bench started; on few cores they take turns with this process)',
    `SQS calls per item, (a): ${fmt(a.sqsCallsPerItem, 3)} (target <= ${SQS_TARGET}: ${a.sqsCallsPerItem <= SQS_TARGET ? 'met' : 'MISSED'})`,
    `  by call: ${breakdown(a.sqsByAction)}`,
    `  per item: ${Object.entries(a.sqsByAction)
      .sort((x, y) => y[1] - x[1])
      .map(([action, c]) => `${action} ${fmt(c / n, 3)}`)
      .join(', ')}`,
  );
  if ((a.sqsByAction.ChangeMessageVisibilityBatch ?? 0) === 0) {
    lines.push('  no heartbeat call: no item was held past the heartbeat interval (half the 30 s visibility timeout)');
  }
  const receives = a.sqsByAction.ReceiveMessage ?? 0;
  lines.push(
    `  (a) pace: ${receives} receives in ${fmt(a.wallMs / 1000, 1)} s = ${fmt(receives / (a.wallMs / 1000), 0)} receives/s (1 to 10 long polls open, by demand); at ${fmt(n / receives, 1)} items per receive that bounds items/s, and with maxWaitMs ${THROUGHPUT.maxWaitMs} a key's batch holds about items/s x maxWaitMs / ${THROUGHPUT.keys} keys`,
  );
  for (const r of results.filter((r) => r.id !== 'batch')) lines.push(`  ${r.id}: ${breakdown(r.sqsByAction)}`);
  return lines;
}

/** This process's CPU per item and the servers'. */
function withServers(r: ContenderResult): number {
  return r.cpuMicrosPerItem + Object.values(r.serverCpuMicrosPerItem).reduce((x, y) => x + y, 0);
}

/** The servers' CPU per item, e.g. "elasticmq 610, memcached 25", or "-" when this bench started none. */
function serverCpu(r: ContenderResult): string {
  const parts = Object.entries(r.serverCpuMicrosPerItem);
  return parts.length === 0 ? '-' : parts.map(([name, us]) => `${name} ${fmt(us, 0)}`).join(', ');
}

/** Added to every SQS call in scenario 5: about an SQS round trip within a region, against ~1 ms on loopback. */
export const ROUND_TRIP_MS = 20;

/** Scenario 5: wall time and SQS calls with one long poll per queue against the default, the batch job's default against 4, and against sqs-consumer. */
export function roundTripLines(results: readonly ContenderResult[]): string[] {
  const by = new Map(results.map((r) => [r.id, r]));
  const lines = [`${ROUND_TRIP_MS} ms added to every SQS call (${results[0]?.items ?? 0} items each):`];
  for (const r of results) {
    lines.push(
      `  ${LABELS[r.id]}: ${fmt(r.wallMs / 1000, 1)} s, ${fmt(r.itemsPerSecond, 0)} items/s, ${fmt(r.sqsCallsPerItem, 3)} SQS calls/item`,
    );
  }
  for (const [one, many] of [
    ['per-item-1r', 'per-item'],
    ['batch-1r', 'batch'],
  ] as const) {
    const a = by.get(one);
    const b = by.get(many);
    if (a !== undefined && b !== undefined)
      lines.push(`  ${many}: the default took ${fmt(b.wallMs / a.wallMs, 2)}x the wall time of one long poll per queue`);
  }
  const [old, now] = [by.get('batch-4r'), by.get('batch')];
  if (old !== undefined && now !== undefined)
    lines.push(`  batch: the default (up to 10 long polls) took ${fmt(now.wallMs / old.wallMs, 2)}x the wall time of up to 4`);
  const consumer = by.get('consumer-per-key');
  for (const id of ['batch', 'batch-4r'] as const) {
    const r = by.get(id);
    if (r !== undefined && consumer !== undefined)
      lines.push(
        `  ${id} against sqs-consumer per key: ${fmt(r.wallMs / consumer.wallMs, 2)}x its wall time, ${fmt(consumer.downstreamCallsPerItem / r.downstreamCallsPerItem, 1)}x fewer downstream calls`,
      );
  }
  const [shallow, deep] = [by.get('per-item'), by.get('per-item-prefetch')];
  if (shallow !== undefined && deep !== undefined)
    lines.push(
      `  per-item: prefetch 100 took ${fmt(deep.wallMs / shallow.wallMs, 2)}x the wall time of the default 10 (concurrency + prefetch bounds the messages running, buffered and asked for)`,
    );
  return lines;
}
