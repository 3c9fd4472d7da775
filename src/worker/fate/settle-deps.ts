import type { Logger } from 'pino';
import type { WorkerEvents } from '../../job-events.js';
import type { ConcurrencySlots, JobLock } from '../../ports/lock.js';
import type { QueuePort } from '../../ports/queue.js';
import type { StatusTracker } from '../../status/tracker.js';
import type { DeleteBatcher, VisibilityBatcher } from './batchers.js';
import type { Heartbeat } from '../hold/heartbeat.js';

/** What settling a message needs: the ports it acts through, and the queue's settings. */
export interface SettleDeps {
  readonly sqs: QueuePort;
  readonly acks: DeleteBatcher;
  /** Hand-backs by visibility, batched. */
  readonly visibility: VisibilityBatcher;
  readonly heartbeat: Heartbeat;
  readonly lock: JobLock;
  readonly slots: ConcurrencySlots | undefined;
  readonly completedTtlSeconds: number;
  readonly lockTtlSeconds: number;
  readonly visibilityTimeoutSeconds: number;
  readonly deadLetterQueueUrl: (queueUrl: string) => string;
  /** From the queue's RedrivePolicy; undefined when SQS never dead-letters on its own. */
  readonly maxReceiveCount: (queueUrl: string) => number | undefined;
  readonly logger: Logger;
  readonly emit: <K extends keyof WorkerEvents & string>(event: K, ...args: WorkerEvents[K]) => void;
  readonly onError: (where: string, error: unknown) => void;
  /** Job status and fan-out counts (a job store is configured), else undefined. */
  readonly status: StatusTracker | undefined;
}
