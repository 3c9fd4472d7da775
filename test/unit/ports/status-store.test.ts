import { describe, expect, it } from 'vitest';
import { isLater, type JobState, MAX_JSON_BYTES, smallJson, viewOf } from '../../../src/ports/status-store.js';

// The status store's one ordering rule and what a read shows, written once for every store (the
// contract tests hold DynamoDB's conditions and the in-memory store to the same answers).
describe('isLater: which state change wins over what is stored', () => {
  const stored = (state: JobState, attempt: number) => ({ state, attempt });
  it.each([
    ['nothing stored', { state: 'waiting', attempt: 0 }, undefined, true],
    ['a later attempt', { state: 'running', attempt: 2 }, stored('retrying', 1), true],
    ['a later state in the same attempt', { state: 'retrying', attempt: 1 }, stored('running', 1), true],
    ['the same state again', { state: 'running', attempt: 1 }, stored('running', 1), false],
    ['an earlier attempt (a lost lease, late)', { state: 'running', attempt: 1 }, stored('running', 2), false],
    ['failed after failed, same attempt', { state: 'failed', attempt: 3 }, stored('failed', 3), false],
    ['anything after completed', { state: 'failed', attempt: 9 }, stored('completed', 1), false],
    ['completed after completed', { state: 'completed', attempt: 2 }, stored('completed', 1), false],
    [
      'completed after failed, even of an older attempt (a replay that succeeded)',
      { state: 'completed', attempt: 1 },
      stored('failed', 5),
      true,
    ],
  ] as const)('%s: %s', (_what, t, s, wins) => {
    expect(isLater(t, s)).toBe(wins);
  });
});

describe('viewOf: a fan-out parent follows its children', () => {
  const fanOut = (ended: number, total: number) => ({ total, sent: total, succeeded: ended, failed: 0, completionSent: false });
  it('shows a job without a fan-out as stored (a record without a state reads running)', () => {
    expect(viewOf('retrying', { done: 3 }, undefined)).toEqual({ state: 'retrying', progress: { done: 3 } });
    expect(viewOf(undefined, undefined, undefined).state).toBe('running');
  });
  it('waits for the children of a parent that completed its own run, or never recorded one', () => {
    expect(viewOf('completed', undefined, fanOut(1, 3))).toEqual({ state: 'waiting-children', progress: { done: 1, total: 3 } });
    expect(viewOf(undefined, undefined, fanOut(3, 3))).toEqual({ state: 'completed', progress: { done: 3, total: 3 } });
  });
  it('keeps a parent that failed or is still running as it is, and its own progress over its children’s', () => {
    expect(viewOf('failed', undefined, fanOut(0, 2)).state).toBe('failed');
    expect(viewOf('running', { done: 7, total: 10 }, fanOut(0, 2))).toEqual({ state: 'running', progress: { done: 7, total: 10 } });
  });
});

describe('smallJson', () => {
  it('keeps JSON up to the limit, and drops what is bigger or not JSON', () => {
    expect(smallJson({ rows: 3 })).toBe('{"rows":3}');
    expect(smallJson('x'.repeat(MAX_JSON_BYTES - 2))).toHaveLength(MAX_JSON_BYTES);
    expect(smallJson('x'.repeat(MAX_JSON_BYTES - 1))).toBeUndefined();
    expect(smallJson(undefined)).toBeUndefined();
    expect(smallJson(10n)).toBeUndefined();
    const loop: Record<string, unknown> = {};
    loop.self = loop;
    expect(smallJson(loop)).toBeUndefined();
  });
});
