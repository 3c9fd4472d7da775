import type { JobLock } from '../ports/lock.js';
import type { Permits } from '../ports/permits.js';
import type { RateLimits } from '../ports/rate-limits.js';

// The lock, the permits and the rate limits as the worker uses them. Their contracts say claim(), take() and reserve() answer
// 'unavailable' rather than throw; a port that throws anyway is read the same way here, once, so
// no caller needs its own guard. An error is "unknown", never "taken" or "full".

/** `call`, answering 'unavailable' when it throws or rejects. */
function unavailableOnThrow<A extends unknown[], R>(call: (...a: A) => Promise<R>): (...a: A) => Promise<R | 'unavailable'> {
  return async (...a) => {
    try {
      return await call(...a);
    } catch {
      return 'unavailable';
    }
  };
}

export function guardedLock(lock: JobLock): JobLock {
  return {
    claim: unavailableOnThrow((...a: Parameters<JobLock['claim']>) => lock.claim(...a)),
    extend: (...a) => lock.extend(...a),
    complete: (...a) => lock.complete(...a),
    release: (...a) => lock.release(...a),
    markDeadLettered: (...a) => lock.markDeadLettered(...a),
    ...(lock.leave === undefined ? {} : { leave: (...a: Parameters<NonNullable<JobLock['leave']>>) => lock.leave!(...a) }),
    // Unknown when it throws: the worker then counts the run as a new one.
    ...(lock.holder === undefined ? {} : { holder: (jobId: string) => lock.holder!(jobId).catch(() => undefined) }),
    close: () => lock.close(),
  };
}

export function guardedPermits(permits: Permits): Permits {
  return {
    take: unavailableOnThrow((...a: Parameters<Permits['take']>) => permits.take(...a)),
    extend: (...a) => permits.extend(...a),
    release: (...a) => permits.release(...a),
  };
}

export function guardedRateLimits(rates: RateLimits): RateLimits {
  return { reserve: unavailableOnThrow((...a: Parameters<RateLimits['reserve']>) => rates.reserve(...a)) };
}
