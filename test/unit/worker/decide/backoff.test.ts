import { describe, expect, it } from 'vitest';
import { DEFAULT_BACKOFF } from '../../../../src/core/definition-rules.js';
import { SQS_MAX_HOLD_MS as MAX_HOLD_MS } from '../../../../src/core/sqs-limits.js';
import { retryDelayMs, visibilitySeconds } from '../../../../src/worker/decide/backoff.js';

describe('retryDelayMs', () => {
  const noJitter = { ...DEFAULT_BACKOFF, jitter: 0 };

  it('grows 1 s, 5 s, 25 s, ... from the receive count and stops at the cap', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((a) => retryDelayMs(noJitter, a))).toEqual([1_000, 5_000, 25_000, 125_000, 625_000, 900_000, 900_000]);
  });

  it('takes away at most `jitter` of the delay, never adds to it', () => {
    expect(retryDelayMs(DEFAULT_BACKOFF, 3, () => 0)).toBe(25_000);
    expect(retryDelayMs(DEFAULT_BACKOFF, 3, () => 0.999999)).toBe(20_000);
    for (let i = 0; i < 100; i++) {
      const d = retryDelayMs(DEFAULT_BACKOFF, 2);
      expect(d).toBeGreaterThanOrEqual(4_000);
      expect(d).toBeLessThanOrEqual(5_000);
    }
  });

  it('treats a receive count below 1 as the first attempt', () => {
    expect(retryDelayMs(noJitter, 0)).toBe(1_000);
  });
});

describe('visibilitySeconds', () => {
  it('rounds up to whole seconds', () => {
    expect(visibilitySeconds(1_001, 0)).toBe(2);
    expect(visibilitySeconds(0, 0)).toBe(0);
  });

  it('never asks past the 12-hour hold limit', () => {
    expect(visibilitySeconds(900_000, MAX_HOLD_MS - 60_000)).toBe(59);
    expect(visibilitySeconds(900_000, MAX_HOLD_MS)).toBe(0);
  });
});
