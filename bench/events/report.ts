/** The table (SNS path, direct path, SNS / direct) and the paragraph that reads it. */
import { percentile } from './timeline.js';

export interface PathResult {
  readonly name: 'sns' | 'direct';
  readonly events: number;
  readonly perJob: readonly number[];
  readonly perEvent: readonly number[];
  readonly call: readonly number[];
  readonly missing: number;
  readonly duplicates: number;
  readonly sendErrors: number;
  readonly failedCalls: number;
  readonly producerSns: Record<string, number>;
  readonly producerSqs: Record<string, number>;
  readonly workerSqs: Record<string, number>;
}

const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);
const per = (r: Record<string, number>, n: number) => sum(r) / n;

interface Row {
  readonly label: string;
  readonly of: (p: PathResult) => number;
  readonly unit: 'ms' | 'calls';
}

const ROWS: readonly Row[] = [
  { label: 'job: publish → handler p50', of: (p) => percentile(p.perJob, 50), unit: 'ms' },
  { label: 'job: publish → handler p99', of: (p) => percentile(p.perJob, 99), unit: 'ms' },
  { label: 'event: all 4 handlers p50', of: (p) => percentile(p.perEvent, 50), unit: 'ms' },
  { label: 'event: all 4 handlers p99', of: (p) => percentile(p.perEvent, 99), unit: 'ms' },
  { label: 'producer call p50', of: (p) => percentile(p.call, 50), unit: 'ms' },
  { label: 'producer call p99', of: (p) => percentile(p.call, 99), unit: 'ms' },
  { label: 'SNS calls / event (producer)', of: (p) => per(p.producerSns, p.events), unit: 'calls' },
  { label: 'SQS calls / event (producer)', of: (p) => per(p.producerSqs, p.events), unit: 'calls' },
  { label: 'SQS calls / event (4 workers)', of: (p) => per(p.workerSqs, p.events), unit: 'calls' },
  {
    label: 'all calls / event',
    of: (p) => (sum(p.producerSns) + sum(p.producerSqs) + sum(p.workerSqs)) / p.events,
    unit: 'calls',
  },
];

function fmt(x: number, unit: Row['unit']): string {
  if (Number.isNaN(x)) return 'n/a';
  return unit === 'ms' ? `${x.toFixed(1)} ms` : x.toFixed(2);
}

function ratio(a: number, b: number): string {
  if (Number.isNaN(a) || Number.isNaN(b)) return 'n/a';
  if (b === 0) return a === 0 ? '=' : '∞ (none direct)';
  return `${(a / b).toFixed(2)}x`;
}

export function table(sns: PathResult, direct: PathResult): string {
  const w = Math.max(...ROWS.map((r) => r.label.length));
  const head = `${'metric'.padEnd(w)}  ${'SNS path'.padStart(11)}  ${'direct'.padStart(11)}  SNS / direct`;
  const lines = ROWS.map((r) => {
    const a = r.of(sns);
    const b = r.of(direct);
    return `${r.label.padEnd(w)}  ${fmt(a, r.unit).padStart(11)}  ${fmt(b, r.unit).padStart(11)}  ${ratio(a, b)}`;
  });
  return [head, '-'.repeat(head.length + 4), ...lines].join('\n');
}

/** Calls per event by operation, e.g. `producer Publish 1.00 | workers ReceiveMessage 4.01, DeleteMessageBatch 3.99`. */
export function breakdown(p: PathResult): string {
  const part = (r: Record<string, number>) =>
    Object.entries(r)
      .map(([op, c]) => `${op} ${(c / p.events).toFixed(2)}`)
      .join(', ') || 'none';
  return `${p.name.padEnd(6)}  producer: ${part({ ...p.producerSns, ...p.producerSqs })} | workers: ${part(p.workerSqs)}`;
}

/** What went wrong, if anything: runs missing, duplicates, failed sends or calls. */
export function anomalies(p: PathResult): string[] {
  const out: string[] = [];
  if (p.missing > 0) out.push(`${p.name}: ${p.missing} job runs never happened (within the drain timeout)`);
  if (p.duplicates > 0) out.push(`${p.name}: ${p.duplicates} duplicate runs (no dedupe lock in this bench)`);
  if (p.sendErrors > 0) out.push(`${p.name}: ${p.sendErrors} publish/enqueue calls failed`);
  if (p.failedCalls > 0) out.push(`${p.name}: ${p.failedCalls} SDK calls failed (counted attempts)`);
  return out;
}

const JOBS = 4;
const sameish = (a: number, b: number) => Math.abs(a - b) <= 0.1 * Math.max(a, b);

function compare(a: number, b: number): string {
  const r = a / b;
  if (r > 1.1) return `${r.toFixed(2)}x slower than`;
  if (r < 0.9) return `${(1 / r).toFixed(2)}x faster than`;
  return 'about as fast as';
}

export function interpretation(sns: PathResult, direct: PathResult): string {
  const p50 = [percentile(sns.perJob, 50), percentile(direct.perJob, 50)] as const;
  const p99 = [percentile(sns.perJob, 99), percentile(direct.perJob, 99)] as const;
  const call = [percentile(sns.call, 50), percentile(direct.call, 50)] as const;
  const produced = [per(sns.producerSns, sns.events) + per(sns.producerSqs, sns.events), per(direct.producerSqs, direct.events)] as const;
  const workers = [per(sns.workerSqs, sns.events), per(direct.workerSqs, direct.events)] as const;
  const total = [produced[0] + workers[0], produced[1] + workers[1]] as const;
  const perJob = workers.map((w) => (w / JOBS).toFixed(2));
  const oneByOne = Math.min(...workers) / JOBS >= 1.8;
  return [
    `A job subscribed through SNS began ${ms(p50[0])} after publish() was called at the median and ${ms(p99[0])} at p99,`,
    `against ${ms(p50[1])} / ${ms(p99[1])} when the producer enqueued the 4 jobs itself: the SNS path is ${compare(p50[0], p50[1])}`,
    `the direct one at p50 and ${compare(p99[0], p99[1])} it at p99; the extra hop (SNS takes the publish, then sends a copy to each`,
    `subscriber queue) costs ${ms(p50[0] - p50[1])} at the median here. The publisher itself waits for one SNS call (${ms(call[0])} at p50)`,
    `instead of 4 parallel SQS sends (${ms(call[1])}) and makes ${produced[0].toFixed(2)} calls per event instead of ${produced[1].toFixed(2)};`,
    "SNS's deliveries into the queues are not client calls and are not counted (SNS prices them per endpoint type).",
    `The workers made ${workers[0].toFixed(2)} vs ${workers[1].toFixed(2)} SQS calls per event (${perJob[0]} vs ${perJob[1]} per job,`,
    sameish(workers[0], workers[1]) ? 'the same on both paths:' : 'not the same on both paths (see the breakdown):',
    oneByOne
      ? 'at this pace nearly every long poll returns one message and each delete batch holds one; under load both fall toward 0.2 per job),'
      : 'polls and delete batches carried several messages at this pace; the floor is 0.2 per job),',
    `so counted calls per event come to ${total[0].toFixed(2)} vs ${total[1].toFixed(2)} (${ratio(total[0], total[1])})`,
    total[0] < total[1]
      ? '; the producer makes one call per event instead of one per subscriber, so the saving grows with the number of subscribers.'
      : '.',
    "Caveats: LocalStack's SNS delivers to its own SQS in-process on one machine, so the gap measured here is not AWS's cross-service",
    'hop (measure there before quoting milliseconds); both paths ran interleaved in one process, without the memcached dedupe lock.',
  ]
    .join(' ')
    .replace(' ;', ';')
    .replace(' .', '.');
}

const ms = (x: number) => `${x.toFixed(1)} ms`;
