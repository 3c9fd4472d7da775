import type { BackoffPolicy } from '../../core/definition-rules.js';
import { SQS_MAX_HOLD_MS as MAX_HOLD_MS } from '../../core/sqs-limits.js';

/**
 * The delay before attempt `attempt + 1`, after attempt `attempt` (1-based, SQS's receive count)
 * failed: baseMs * factor^(attempt-1), capped at capMs, less up to `jitter` of itself at random
 * (so retries of a burst spread out and never exceed the cap).
 */
export function retryDelayMs(policy: BackoffPolicy, attempt: number, random: () => number = Math.random): number {
  const exponent = Math.max(0, Math.floor(attempt) - 1);
  const nominal = Math.min(policy.capMs, policy.baseMs * policy.factor ** exponent);
  return Math.round(nominal * (1 - policy.jitter * random()));
}

/** A delay in ms as a visibility timeout in whole seconds, never past the 12-hour hold limit. */
export function visibilitySeconds(delayMs: number, heldForMs: number): number {
  const left = Math.floor((MAX_HOLD_MS - heldForMs) / 1000) - 1;
  return Math.max(0, Math.min(Math.ceil(delayMs / 1000), left));
}
