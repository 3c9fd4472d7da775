import type { ClaimResult, JobLock } from '../ports/lock.js';
import type { Permits } from '../ports/permits.js';

// The lock and the permits as the worker uses them. Their contracts say claim() and take() answer
// 'unavailable' rather than throw; a port that throws anyway is read the same way here, once, so
// no caller needs its own guard. An error is "unknown", never "taken" or "full".

export function guardedLock(lock: JobLock): JobLock {
  return {
    claim: async (...a): Promise<ClaimResult> => {
      try {
        return await lock.claim(...a);
      } catch {
        return 'unavailable';
      }
    },
    extend: (...a) => lock.extend(...a),
    complete: (...a) => lock.complete(...a),
    release: (...a) => lock.release(...a),
    markDeadLettered: (...a) => lock.markDeadLettered(...a),
    close: () => lock.close(),
  };
}

export function guardedPermits(permits: Permits): Permits {
  return {
    take: async (...a) => {
      try {
        return await permits.take(...a);
      } catch {
        return 'unavailable';
      }
    },
    extend: (...a) => permits.extend(...a),
    release: (...a) => permits.release(...a),
  };
}
