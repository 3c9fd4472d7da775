import type { JobLock } from '../ports/lock.js';
import type { Permits } from '../ports/permits.js';
import type { RateLimits } from '../ports/rate-limits.js';

// The lock, the permits and the rate limits as the worker uses them. Their contracts say claim(), take() and reserve() answer
// 'unavailable' rather than throw; a port that throws anyway is read the same way here, once, so
// no caller needs its own guard. An error is "unknown", never "taken" or "full".

/** `call`, answering `answer` when it throws or rejects. */
function answerOnThrow<A extends unknown[], R, F>(call: (...a: A) => Promise<R>, answer: F): (...a: A) => Promise<R | F> {
  return async (...a) => {
    try {
      return await call(...a);
    } catch {
      return answer;
    }
  };
}

export function guardedLock(lock: JobLock): JobLock {
  return {
    claim: answerOnThrow((...a: Parameters<JobLock['claim']>) => lock.claim(...a), 'unavailable' as const),
    extend: (...a) => lock.extend(...a),
    complete: (...a) => lock.complete(...a),
    release: (...a) => lock.release(...a),
    markDeadLettered: (...a) => lock.markDeadLettered(...a),
    ...(lock.leave === undefined ? {} : { leave: (...a: Parameters<NonNullable<JobLock['leave']>>) => lock.leave!(...a) }),
    // Unknown when it throws (see afterClaim's runningHere for what an unknown holder counts).
    ...(lock.holder === undefined ? {} : { holder: answerOnThrow((jobId: string) => lock.holder!(jobId), undefined) }),
    ...(lock.keptSince === undefined ? {} : { keptSince: answerOnThrow((jobId: string) => lock.keptSince!(jobId), undefined) }),
    ...(lock.cancel === undefined ? {} : { cancel: answerOnThrow((jobId: string, ttl: number) => lock.cancel!(jobId, ttl), false) }),
    close: () => lock.close(),
  };
}

export function guardedPermits(permits: Permits): Permits {
  return {
    take: answerOnThrow((...a: Parameters<Permits['take']>) => permits.take(...a), 'unavailable' as const),
    extend: (...a) => permits.extend(...a),
    release: (...a) => permits.release(...a),
  };
}

export function guardedRateLimits(rates: RateLimits): RateLimits {
  return { reserve: answerOnThrow((...a: Parameters<RateLimits['reserve']>) => rates.reserve(...a), 'unavailable' as const) };
}
