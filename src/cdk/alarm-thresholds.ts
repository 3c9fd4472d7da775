import { DLQ_RETENTION_SECONDS } from '../ops/queues.js';

/** The settings the alarms' thresholds come from. */
interface ThresholdSettings {
  readonly oldestMessageSlaSeconds: number;
  readonly p99ProcessingSeconds: number;
  readonly concurrency: number;
  readonly maxTasks: number;
  readonly messageRetentionSeconds: number;
  readonly retentionWarningSeconds?: number | undefined;
  readonly tiers: false | 'strict' | 'weighted';
  readonly backlogAlarmMessages?: number | undefined;
  readonly laneSlaSeconds?: { readonly high?: number | undefined; readonly low?: number | undefined } | undefined;
  /** With `runtime: 'lambda'`, the fleet is the mapping's invocations (`maxConcurrency`), each running up to its batch at once. */
  readonly runtime?: 'fargate' | 'lambda' | undefined;
  readonly lambda?: { readonly maxConcurrency: number; readonly batchSize: number } | undefined;
}

/**
 * Messages waiting (the queue, its spillover queue and lanes together) above which the backlog
 * alarm fires once it has lasted 5 minutes: `backlogAlarmMessages`, or by default what the whole
 * fleet (`maxTasks` × `concurrency` handlers, or on Lambda `maxConcurrency` invocations of up to
 * `concurrency` handlers each, each job taking `p99ProcessingSeconds`) clears within
 * `oldestMessageSlaSeconds`. A backlog beyond it cannot be cleared within the SLA even at full scale.
 */
export function backlogThreshold(s: ThresholdSettings): number {
  if (s.backlogAlarmMessages !== undefined) return s.backlogAlarmMessages;
  const handlers =
    s.runtime === 'lambda' && s.lambda !== undefined
      ? s.lambda.maxConcurrency * Math.min(s.concurrency, s.lambda.batchSize)
      : s.maxTasks * s.concurrency;
  return Math.max(1, Math.floor((handlers * s.oldestMessageSlaSeconds) / s.p99ProcessingSeconds));
}

/**
 * Each lane's SLA for its oldest message, in seconds: `normal` is `oldestMessageSlaSeconds`; with
 * tiers, `high` and `low` as `laneSlaSeconds` gives them, by default a tenth of normal (at least
 * 60 s, CloudWatch's SQS metrics being per minute) and six times normal.
 */
export function laneSlas(s: ThresholdSettings): { high?: number; normal: number; low?: number } {
  const normal = s.oldestMessageSlaSeconds;
  if (s.tiers === false) return { normal };
  return {
    high: s.laneSlaSeconds?.high ?? Math.max(60, Math.round(normal / 10)),
    normal,
    low: s.laneSlaSeconds?.low ?? 6 * normal,
  };
}

/**
 * The ages at which the retention alarms fire, `warning` before SQS deletes a message unread:
 * `retentionWarningSeconds`, by default a quarter of `messageRetentionSeconds`, at most a day.
 * `queue`: the job queue's (and its lanes'). `deadLetters`: the DLQ's, which also
 * allows for the time a message spent in the queue before SQS's redrive moved it: a moved
 * message keeps its first enqueue time (standard queues), so it expires that much sooner, while
 * ApproximateAgeOfOldestMessage counts from the move. (sqs-jobs' own dead-lettering sends a new
 * message, whose age is its age; the threshold is then early, not late.)
 */
export function retentionThresholds(s: ThresholdSettings): { warning: number; queue: number; deadLetters: number } {
  const warning = s.retentionWarningSeconds ?? Math.min(DAY, Math.round(s.messageRetentionSeconds / 4));
  return { warning, queue: s.messageRetentionSeconds - warning, deadLetters: DLQ_RETENTION_SECONDS - s.messageRetentionSeconds - warning };
}

const DAY = 24 * 3600;

/** The shortest time, in seconds, a retention alarm may leave to act on a DLQ's oldest message: an hour. */
const MIN_DEAD_LETTER_THRESHOLD = 3600;

/** What makes the alarms' thresholds unusable, as `{ path, message }` issues for the settings' schema. */
export function thresholdIssues(s: ThresholdSettings): { path: string[]; message: string }[] {
  const issues: { path: string[]; message: string }[] = [];
  if (s.laneSlaSeconds !== undefined && s.tiers === false)
    issues.push({ path: ['laneSlaSeconds'], message: 'needs tiers ("strict" or "weighted"): without them there are no lanes' });
  const sla = laneSlas(s);
  if (sla.high !== undefined && sla.high > sla.normal)
    issues.push({
      path: ['laneSlaSeconds', 'high'],
      message: `must be <= oldestMessageSlaSeconds (${sla.normal}): the high lane is served first`,
    });
  if (sla.low !== undefined && sla.low < sla.normal)
    issues.push({
      path: ['laneSlaSeconds', 'low'],
      message: `must be >= oldestMessageSlaSeconds (${sla.normal}): the low lane is served last`,
    });
  const longest = Math.max(sla.normal, sla.low ?? 0);
  const { warning, queue, deadLetters } = retentionThresholds(s);
  if (queue <= longest)
    issues.push({
      path: ['retentionWarningSeconds'],
      message: `must leave messageRetentionSeconds (${s.messageRetentionSeconds}) minus it (${warning}) above the longest oldest-message SLA (${longest}); it leaves ${queue}`,
    });
  if (deadLetters < MIN_DEAD_LETTER_THRESHOLD)
    issues.push({
      path: ['messageRetentionSeconds'],
      message:
        `plus retentionWarningSeconds (${warning}) must stay an hour below the DLQ's ${DLQ_RETENTION_SECONDS} s: ` +
        'a message SQS moves to the DLQ keeps its first enqueue time, so one that waited this long in the queue has that much less left in the DLQ',
    });
  return issues;
}
