import type { UnfinishedRuns } from '../../core/delivery.js';
import { SQS_MAX_VISIBILITY_SECONDS } from '../../core/sqs-limits.js';
import type { ClaimResult } from '../../ports/lock.js';
import { handedBack, handedBackNow, leaseLost, type Outcome } from './decide.js';

/*
 * What happens to a message once its job id is claimed (or found held): the claim's rules, beside
 * decide.ts's others, pure functions to an Outcome; one row per rule in test/unit/worker/decide/decide.test.ts.
 */

export interface ClaimFacts {
  readonly claim: ClaimResult;
  /** The heartbeat lost the lease while the claim was in flight. */
  readonly leaseLost: boolean;
  readonly lockFailClosed: boolean;
  /** The worker began stopping before the handler could start. */
  readonly stopping: boolean;
  readonly visibilityTimeoutSeconds: number;
  /** How long a claim lives past its holder's last heartbeat. */
  readonly lockTtlSeconds: number;
  readonly maxReceiveCount: number | undefined;
  /** The job's runs that never finished before this message (see ATTR_UNFINISHED_RUNS). */
  readonly unfinished: UnfinishedRuns;
  /** With 'running': the token of the claim holding the job id, when the lock could say. */
  readonly holder: string | undefined;
  /** This message's own receive count, and how long ago it was sent. */
  readonly receiveCount: number;
  readonly sentAgoMs: number;
  /** A FIFO message goes back by visibility here (a copy would join the back of its group). */
  readonly fifo: boolean;
}

/** After claiming the job id: 'run', or how the message ends without running. */
export function afterClaim(f: ClaimFacts): Outcome | 'run' {
  if (f.leaseLost) return leaseLost('the job id was being claimed');
  switch (f.claim) {
    case 'completed':
    case 'dead-lettered':
      return { kind: 'duplicate', state: f.claim };
    case 'cancelled':
      return { kind: 'cancelled', reason: 'cancelled before it ran', abandoned: false };
    case 'running-copy':
      // Another message carries the running job: it retries, or comes back if its worker dies, so
      // this copy adds nothing and is deleted rather than deferred (a deferral spends a receive).
      return { kind: 'duplicate', state: 'running' };
    case 'running':
      return runningHere(f);
    case 'unavailable':
      if (f.lockFailClosed) return handedBack('dedupe lock unavailable (failing closed)', f.visibilityTimeoutSeconds);
      break;
    case 'claimed':
      break;
  }
  if (f.maxReceiveCount !== undefined && f.unfinished.runs >= f.maxReceiveCount) {
    const detail = `${f.unfinished.runs} runs never finished (maxReceiveCount ${f.maxReceiveCount}): each time its worker stopped, or lost the message, while running it`;
    return { kind: 'dead-letter', reason: 'retries-exhausted', detail };
  }
  if (f.stopping) return handedBackNow('worker is stopping');
  return 'run';
}

const RUNNING_HERE = 'the job id is running elsewhere under this same message (a redelivery), or that message is on its way to the DLQ';

/**
 * The same message again while its job id is held under it: its holder was killed, or lost it (its
 * visibility ran out; or SQS delivered it twice, rarely: the holder then finds its lease lost), or
 * is sending it to the DLQ. The receive that ran the job was its attempt, so this one is not
 * counted: re-sent to come back after the lock's TTL, when a dead holder's claim has lapsed, so a
 * worker killed mid-job costs the job one receive. The copy counts the run that never finished;
 * claimed with maxReceiveCount of them, it is dead-lettered with the reason. FIFO: by visibility
 * (a copy would lose its place in its group).
 */
function runningHere(f: ClaimFacts): Outcome {
  if (f.fifo) return handedBack(`${RUNNING_HERE}: handed back for one visibility timeout`, f.visibilityTimeoutSeconds);
  const max = f.maxReceiveCount;
  const { runs: before, last } = f.unfinished;
  const runs = countedBefore(f) ? before : before + 1;
  const unfinished = { runs, last: f.holder ?? last };
  if (max === undefined || runs < max)
    return notAnAttempt(`${RUNNING_HERE}: re-sent to come back once its claim lapses (${runs} unfinished run(s))`, f, unfinished);
  return notAnAttempt(`${RUNNING_HERE}; ${runs} runs never finished (maxReceiveCount ${max}): re-sent to be dead-lettered`, f, unfinished);
}

/**
 * Whether the run holding the job id is the one this message counted last, so it counts once: the
 * lock names it; or, where the lock cannot say, a copy back on its first receive before that run's
 * claim could lapse (a lock TTL over SQS's 900 s delay).
 */
function countedBefore(f: ClaimFacts): boolean {
  const { runs, last } = f.unfinished;
  if (f.holder !== undefined) return f.holder === last;
  return runs > 0 && f.receiveCount === 1 && f.sentAgoMs < f.lockTtlSeconds * 1000;
}

/**
 * Not run on this receive, which is not counted: re-sent with a fresh count, back after the lock's
 * TTL (the run holding it lapsed; SQS delays at most 900 s). Should SQS refuse the re-send, handed
 * back by visibility for as long, at most SQS's 12 hours.
 */
function notAnAttempt(reason: string, f: ClaimFacts, unfinishedRuns: UnfinishedRuns): Outcome {
  const delaySeconds = Math.min(f.lockTtlSeconds, SQS_MAX_VISIBILITY_SECONDS);
  return { kind: 'hand-back', reason, delaySeconds, abandoned: false, notAnAttempt: true, unfinishedRuns };
}
