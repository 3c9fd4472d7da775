import type { DeadLetter } from '../ops/dlq.js';
import type { Stats } from '../ops/stats.js';
import type { QueueChange } from '../ops/queues.js';
import type { EventChange } from '../ops/events.js';

/** Left-aligned text columns, two spaces apart. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

const num = (n: number | undefined, digits = 0) => (n === undefined ? '-' : n.toFixed(digits));
const ms = (n: number | undefined) =>
  n === undefined ? '-' : n >= 10_000 ? `${(n / 1000).toFixed(0)}s` : n >= 1_000 ? `${(n / 1000).toFixed(1)}s` : `${Math.round(n)}ms`;
const age = (s: number | undefined) =>
  s === undefined ? '-' : s >= 3_600 ? `${(s / 3_600).toFixed(1)}h` : s >= 60 ? `${Math.round(s / 60)}m` : `${Math.round(s)}s`;

/** One row per job that runs on an event: its queue's depth and its DLQ's, or that the queue is missing. */
function eventRows(stats: Stats): string[][] {
  return stats.events.map((e) => {
    const q = stats.queues.find((x) => x.url === e.queueUrl);
    if (q === undefined) return [e.event, e.job, e.queue, 'no such queue: run sqs-jobs events create', '', ''];
    return [e.event, e.job, e.queue, String(q.visible), String(q.inFlight), q.dlq === undefined ? '-' : String(q.dlq.visible)];
  });
}

/** The stats as tables; `namespace`, where the metrics were looked for, is named when none were found. */
export function renderStats(stats: Stats, namespace?: string): string {
  const queueRows = stats.queues
    .flatMap((q) => [q, ...(q.dlq === undefined ? [] : [q.dlq])])
    .map((q) => [q.name, String(q.visible), String(q.inFlight), String(q.delayed), age(q.oldestAgeSeconds), num(q.enqueuedPerMinute, 1)]);
  const jobRows = stats.jobs.map((j) => [
    j.job,
    j.queue,
    num(j.startedPerMinute, 1),
    String(j.counts.Succeeded),
    String(j.counts.Failed),
    String(j.counts.Retried),
    String(j.counts.DeadLettered),
    String(j.counts.DuplicatesSkipped),
    `${ms(j.waitMs.p50)} / ${ms(j.waitMs.p99)} (avg ${ms(j.waitMs.average)})`,
    `${ms(j.processMs.p50)} / ${ms(j.processMs.p99)} (avg ${ms(j.processMs.average)})`,
  ]);
  const batchRows = stats.jobs.flatMap((j) =>
    j.batches === undefined
      ? []
      : [
          [
            j.job,
            j.queue,
            num(j.batches.perMinute, 1),
            `${num(j.batches.size.p50)} / ${num(j.batches.size.p99)} (avg ${num(j.batches.size.average, 1)})`,
            `${ms(j.batches.heldMs.p50)} / ${ms(j.batches.heldMs.p99)} (avg ${ms(j.batches.heldMs.average)})`,
          ],
        ],
  );
  return [
    `sqs-jobs stats at ${stats.at}, last ${stats.windowMinutes} min`,
    '',
    table(['queue', 'visible', 'in flight', 'delayed', 'oldest', 'sent/min'], queueRows),
    '',
    jobRows.length === 0
      ? `no worker metrics in this window${namespace === undefined ? '' : ` in namespace ${namespace}: if the workers publish elsewhere (their SQS_JOBS_METRICS_NAMESPACE or metrics.namespace), pass it with --namespace`}`
      : table(['job', 'queue', 'runs/min', 'ok', 'failed', 'retried', 'dead', 'dupes', 'wait p50 / p99', 'process p50 / p99'], jobRows),
    ...(batchRows.length === 0 ? [] : ['', table(['batch job', 'queue', 'batches/min', 'size p50 / p99', 'held p50 / p99'], batchRows)]),
    ...(stats.events.length === 0
      ? []
      : ['', table(['event', 'subscriber job', 'queue', 'visible', 'in flight', 'dead letters'], eventRows(stats))]),
    '',
    '"-": not published by this server (emulators have no AWS/SQS metrics or percentiles)',
  ].join('\n');
}

const UNITS: Partial<Record<QueueChange['setting'], string>> = { visibility: ' s', retention: ' s', 'max message size': ' bytes' };

/** What `queues create` did, a line each (`jobs: visibility 5 → 30 s`), or `unchanged`. */
/** What provisionEvents did: its own changes and its queues'. */
export function renderEventChanges(changes: readonly (EventChange | QueueChange)[]): string {
  if (changes.length === 0) return 'unchanged';
  return changes
    .map((c) => {
      if ('setting' in c) return renderQueueChanges([c]);
      if ('topic' in c && 'queue' in c) return `${c.topic} → ${c.queue}: ${c.change}`;
      return 'topic' in c ? `topic ${c.topic}: ${c.change}` : `${c.queue}: ${c.change}`;
    })
    .join('\n');
}

export function renderQueueChanges(changes: readonly QueueChange[]): string {
  if (changes.length === 0) return 'unchanged';
  return changes
    .map((c) => {
      if (c.setting === 'created') return `${c.queue}: created`;
      // A DLQ is named by its ARN: show its name.
      const shown = (v: number | string) => (typeof v === 'string' ? (v.split(':').at(-1) ?? v) : String(v));
      return `${c.queue}: ${c.setting} ${c.from === undefined ? 'none' : shown(c.from)} → ${shown(c.to)}${UNITS[c.setting] ?? ''}`;
    })
    .join('\n');
}

export function renderDeadLetters(letters: readonly DeadLetter[]): string {
  if (letters.length === 0) return 'the dead-letter queue is empty';
  return table(
    ['job', 'job id', 'tenant', 'attempt', 'reason', 'error'],
    letters.map((l) => [
      l.jobName ?? (l.event === undefined ? '?' : `(event ${l.event})`),
      l.jobId ?? '?',
      l.tenant ?? '',
      l.receiveCount === undefined ? '?' : String(l.receiveCount),
      l.reason,
      (l.error ?? '').replace(/\s+/g, ' ').slice(0, 80),
    ]),
  );
}
