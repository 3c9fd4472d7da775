import { describe, expect, it } from 'vitest';
import { newToken } from '../../../../src/worker/run/claim.js';

describe('newToken', () => {
  it('is new every time, never holds the lock value separator, and is short', () => {
    const tokens = Array.from({ length: 10_000 }, newToken);
    expect(new Set(tokens).size).toBe(tokens.length);
    for (const t of tokens) {
      expect(t).not.toContain(':');
      expect(t.length).toBeLessThanOrEqual(24);
    }
  });
});
