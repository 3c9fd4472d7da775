import type { Logger } from 'pino';
import type { WorkerEvents } from '../core/job-events.js';
import type { MetricsRecorder } from '../metrics/recorder.js';
import type { JobLock } from '../ports/lock.js';
import type { Permits } from '../ports/permits.js';
import type { RateLimits } from '../ports/rate-limits.js';
import type { QueuePort } from '../ports/queue.js';
import type { FanOutDeps } from '../fan-out/fan-out.js';
import type { StatusTracker } from '../status/tracker.js';
import type { StoredCancels } from '../status/stored-cancels.js';
import type { Heartbeat } from './hold/heartbeat.js';
import type { DrainTally } from './drain-tally.js';
import type { TenantTally } from './tenant-tally.js';
import type { WorkerConfig } from './config.js';
import type { QueueState } from './queue-state.js';
import type { ProcessTracing } from '../ports/tracing.js';
import type { WorkerPauses } from './pauses.js';

type Emit = <K extends keyof WorkerEvents & string>(event: K, ...args: WorkerEvents[K]) => void;
export type OnError = (where: string, error: unknown) => void;
/** What of the queue port every phase may use: receive (the poller), and find a queue's DLQ (start). */
type ReceivingPort = Pick<QueuePort, 'receive' | 'deadLetterTarget'>;

/** How a worker reports, one per worker: its events (`worker.on`), its logger, and where an error it survives goes. */
export interface Reporting {
  readonly emit: Emit;
  readonly log: Logger;
  readonly onError: OnError;
}

/**
 * What every phase of a worker shares, one per worker: its settings, its ports (given, or built
 * from the SDKs) and the services on them, how it reports, what it knows of each queue, and
 * whether it is stopping. Each phase takes this one object instead of a bag of its own.
 */
export interface WorkerContext {
  readonly config: WorkerConfig;
  /** How every phase reports: events, logs, errors. */
  readonly report: Reporting;
  /** Aborted when stop() begins: no new receive or handler starts. */
  readonly stop: AbortController;
  /** Aborted by a second signal, or once running handlers are done: ends open polls and every wait at once. */
  readonly force: AbortController;
  /** The queue port as the phases see it: receive, and a queue's DLQ. Acting on a message is settle's (fate/acts.ts). */
  readonly sqs: ReceivingPort;
  readonly lock: JobLock;
  /** Fleet-wide permits (tenant caps, exclusive batch keys): the option, else memcached's. */
  readonly permits: Permits | undefined;
  /** Fleet-wide starts per second (jobs' rateLimit): the option, else memcached's. */
  readonly rates: RateLimits | undefined;
  readonly heartbeat: Heartbeat;
  /** The deletes counted for the drain meter (admission's drain rate), when there is one. */
  readonly drains: DrainTally | undefined;
  /** What this worker sees of each tenant, reported to the tenant meter (the dashboard's tenants page), when there is one. */
  readonly tenants: TenantTally | undefined;
  readonly metrics: MetricsRecorder | undefined;
  /** Job status (a job store is configured): its writes, the cancels it keeps, and what ctx.fanOut needs. */
  readonly status: { readonly tracker: StatusTracker; readonly cancels: StoredCancels; readonly fanOut: FanOutDeps } | undefined;
  /** The pauses in force (`sqs-jobs pause`), when the job store keeps them. */
  readonly pauses: WorkerPauses | undefined;
  /** Spans around handler runs, when tracing is on and @opentelemetry/api is installed. */
  readonly tracing: ProcessTracing | undefined;
  /** What the worker knows of the queue a message came from (its DLQ once started). */
  queueOf(url: string): QueueState;
  /** Destroys the SDK clients this worker made (none when the queue port or clients were given), and closes the job store. */
  readonly closeClients: () => void;
}

/*
 * What each phase may use of the worker's context. A phase's functions take its part, so their
 * signatures (with their imports) say what each touches; the delivery, the batching and the worker
 * hold the whole context to hand each phase its part. Acting on a message is in none of them: it
 * is settle's own port (fate/acts.ts).
 */

/** intake/: receive, and hold what came. */
export type IntakeNeeds = Pick<WorkerContext, 'config' | 'stop' | 'force' | 'sqs' | 'heartbeat' | 'report' | 'pauses'>;
/** run/claim.ts: the job id's lock, and the cancels the job store keeps. */
export type ClaimNeeds = Pick<WorkerContext, 'config' | 'stop' | 'report' | 'lock' | 'queueOf' | 'status'>;
/** turns/: a job's or a batch call's turn (pauses, permits, rate slots). */
export type TurnNeeds = Pick<WorkerContext, 'config' | 'stop' | 'report' | 'permits' | 'rates' | 'queueOf' | 'pauses'>;
/** run/ and batch/batch-run.ts: a handler's run, its ctx and its span. */
export type RunNeeds = Pick<WorkerContext, 'config' | 'report' | 'queueOf' | 'status' | 'tracing'>;
/** fate/: where an outcome goes and how it is carried out (with its acts). */
export type FateNeeds = Pick<WorkerContext, 'config' | 'stop' | 'report' | 'heartbeat' | 'lock' | 'permits' | 'queueOf' | 'status'>;
