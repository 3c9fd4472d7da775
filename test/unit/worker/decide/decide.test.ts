import { describe, expect, it } from 'vitest';
import { RetryLaterError, SqsJobsError, UnrecoverableError } from '../../../../src/core/errors.js';
import type { ClaimResult } from '../../../../src/ports/lock.js';
import {
  afterRun,
  cutShort,
  DEAD_LETTERED_COPY,
  handedBackNow,
  internalError,
  leaseLost,
  onceLost,
  poisoned,
  type Outcome,
  type RunFacts,
} from '../../../../src/worker/decide/decide.js';
import {
  afterPause,
  afterPermit,
  afterRateSlot,
  type PauseFacts,
  type PermitFacts,
  type RateFacts,
} from '../../../../src/worker/decide/decide-turn.js';
import { afterClaim, type ClaimFacts } from '../../../../src/worker/decide/decide-claim.js';
import { mayHold, type Receives } from '../../../../src/worker/decide/resend.js';
import { COUNT_RETRY_SECONDS, ifFails } from '../../../../src/worker/fate/fallback.js';
import { blocksGroup, retriesInPlace } from '../../../../src/worker/fate/outcome-rules.js';
import type { AbortCode } from '../../../../src/worker/hold/lease.js';
import type { Execution } from '../../../../src/worker/decide/decide.js';

const claimFacts = (over: Partial<ClaimFacts>): ClaimFacts => ({
  claim: 'claimed',
  leaseLost: false,
  lockFailClosed: false,
  stopping: false,
  visibilityTimeoutSeconds: 30,
  lockTtlSeconds: 35,
  maxReceiveCount: 4,
  unfinished: { runs: 0, last: undefined },
  holder: undefined,
  receiveCount: 1,
  sentAgoMs: 0,
  fifo: false,
  ...over,
});

const RUNNING_HERE = 'the job id is running elsewhere under this same message (a redelivery), or that message is on its way to the DLQ';

/** The held-claim re-send (maxReceiveCount 4): `runs` unfinished, the last `last`; `dlq`: the copy due for the DLQ. */
const resentHeld = (runs: number, last: string | undefined, o: { dlq?: boolean; delaySeconds?: number } = {}): Outcome => ({
  kind: 'hand-back',
  reason: o.dlq
    ? `${RUNNING_HERE}; ${runs} runs never finished (maxReceiveCount 4): re-sent to be dead-lettered`
    : `${RUNNING_HERE}: re-sent to come back once its claim lapses (${runs} unfinished run(s))`,
  delaySeconds: o.delaySeconds ?? 35,
  abandoned: false,
  notAnAttempt: true,
  unfinishedRuns: { runs, last },
});

const NEVER_FINISHED_4: Outcome = {
  kind: 'dead-letter',
  reason: 'retries-exhausted',
  detail: '4 runs never finished (maxReceiveCount 4): each time its worker stopped, or lost the message, while running it',
};

describe('afterClaim: one row per rule', () => {
  const rows: [string, Partial<ClaimFacts>, Outcome | 'run'][] = [
    ['claimed → run', {}, 'run'],
    ['lock unavailable, failing open → run without it', { claim: 'unavailable' }, 'run'],
    [
      'lock unavailable, failing closed → handed back for one visibility timeout',
      { claim: 'unavailable', lockFailClosed: true },
      { kind: 'hand-back', reason: 'dedupe lock unavailable (failing closed)', delaySeconds: 30, abandoned: false },
    ],
    ['completed → deleted as a duplicate', { claim: 'completed' }, { kind: 'duplicate', state: 'completed' }],
    [
      'this message already dead-lettered → deleted as a leftover',
      { claim: 'dead-lettered' },
      { kind: 'duplicate', state: 'dead-lettered' },
    ],
    [
      'cancelled (the job, or the fan-out it belongs to) → deleted, never run',
      { claim: 'cancelled' },
      { kind: 'cancelled', reason: 'cancelled before it ran', abandoned: false },
    ],
    [
      'cancelled, even while the worker is stopping → deleted (nothing to hand back)',
      { claim: 'cancelled', stopping: true },
      { kind: 'cancelled', reason: 'cancelled before it ran', abandoned: false },
    ],
    ['running under another message → this copy deleted', { claim: 'running-copy' }, { kind: 'duplicate', state: 'running' }],
    [
      "running under this same message (its holder killed) → re-sent for after the lock's TTL, this receive not an attempt, the run counted unfinished",
      { claim: 'running', holder: 'tok-1' },
      resentHeld(1, 'tok-1'),
    ],
    [
      'running under this same message, FIFO → handed back by visibility (a re-sent copy would leave its place in the group)',
      { claim: 'running', fifo: true },
      { kind: 'hand-back', reason: `${RUNNING_HERE}: handed back for one visibility timeout`, delaySeconds: 30, abandoned: false },
    ],
    [
      'a copy that finds the run it counted still holding the claim → re-sent again, that run not counted twice',
      { claim: 'running', holder: 'tok-1', unfinished: { runs: 1, last: 'tok-1' } },
      resentHeld(1, 'tok-1'),
    ],
    [
      "the holder unknown (a lock that cannot say), the copy sent longer ago than the lock's TTL → counted as a new run, the last token kept",
      { claim: 'running', unfinished: { runs: 1, last: 'tok-1' }, sentAgoMs: 36_000 },
      resentHeld(2, 'tok-1'),
    ],
    [
      'the holder unknown, the copy run and back on a later receive → counted as a new run',
      { claim: 'running', unfinished: { runs: 1, last: 'tok-1' }, receiveCount: 2, sentAgoMs: 10_000 },
      resentHeld(2, 'tok-1'),
    ],
    [
      "the holder unknown, the copy back on its first receive within the lock's TTL (a TTL over SQS's 900 s delay) → that run not counted again",
      { claim: 'running', unfinished: { runs: 1, last: 'tok-1' }, sentAgoMs: 20_000 },
      resentHeld(1, 'tok-1'),
    ],
    [
      "a lock TTL over SQS's 12-hour visibility ceiling → the hand-back's delay kept within it (should the re-send be refused)",
      { claim: 'running', holder: 'tok-1', lockTtlSeconds: 43_205 },
      resentHeld(1, 'tok-1', { delaySeconds: 43_200 }),
    ],
    [
      "another run unfinished, reaching maxReceiveCount → re-sent to be dead-lettered once the dead run's claim lapses",
      { claim: 'running', holder: 'tok-4', unfinished: { runs: 3, last: 'tok-3' } },
      resentHeld(4, 'tok-4', { dlq: true }),
    ],
    [
      'running under this same message, no redrive policy → re-sent, whatever the count',
      { claim: 'running', maxReceiveCount: undefined, holder: 'tok-41', unfinished: { runs: 40, last: 'tok-40' } },
      resentHeld(41, 'tok-41'),
    ],
    ['claimed with unfinished runs short of maxReceiveCount → run', { unfinished: { runs: 3, last: 'tok-3' } }, 'run'],
    [
      'claimed with maxReceiveCount unfinished runs → dead-lettered with the reason',
      { unfinished: { runs: 4, last: 'tok-4' } },
      NEVER_FINISHED_4,
    ],
    [
      'maxReceiveCount unfinished runs, lock unavailable and failing open → dead-lettered too',
      { claim: 'unavailable', unfinished: { runs: 4, last: 'tok-4' } },
      NEVER_FINISHED_4,
    ],
    [
      "maxReceiveCount unfinished runs, the queue's maxReceiveCount raised since → run",
      { unfinished: { runs: 4, last: 'tok-4' }, maxReceiveCount: 10 },
      'run',
    ],
    [
      'maxReceiveCount unfinished runs but the job completed after all → deleted as a duplicate',
      { claim: 'completed', unfinished: { runs: 4, last: 'tok-4' } },
      { kind: 'duplicate', state: 'completed' },
    ],
    [
      'lease lost while claiming → lost, whatever the claim said',
      { claim: 'completed', leaseLost: true },
      { kind: 'lost', reason: 'the lease was lost while the job id was being claimed', abandoned: false },
    ],
    [
      'claimed but the worker is stopping → handed back at once',
      { stopping: true },
      { kind: 'hand-back', reason: 'worker is stopping', delaySeconds: 0, abandoned: false },
    ],
  ];
  it.each(rows)('%s', (_name, facts, expected) => {
    expect(afterClaim(claimFacts(facts))).toEqual(expected);
  });

  it('has a row for every claim result', () => {
    const all: ClaimResult[] = ['claimed', 'completed', 'dead-lettered', 'running', 'running-copy', 'cancelled', 'unavailable'];
    for (const claim of all) expect(rows.some(([, f]) => f.claim === claim || (claim === 'claimed' && f.claim === undefined))).toBe(true);
  });
});

const backoff = { baseMs: 1_000, factor: 5, capMs: 900_000, jitter: 0 };
const runFacts = (execution: Execution, over: Partial<RunFacts> = {}): RunFacts => ({
  execution,
  receiveCount: 1,
  attempt: 1,
  maxReceiveCount: 5,
  backoff,
  waitMs: 40,
  random: () => 0,
  ...over,
});
const threw = (error: Error): Execution => ({ kind: 'threw', error, processMs: 7 });
const aborted = (code: AbortCode, abandoned = false): Execution => ({
  kind: 'aborted',
  code,
  reason: new SqsJobsError(code, `signal: ${code}`),
  abandoned,
  processMs: 7,
});

describe('afterRun: one row per rule', () => {
  it('returned → succeeded', () => {
    expect(afterRun(runFacts({ kind: 'returned', value: undefined, processMs: 12 }))).toEqual({
      kind: 'succeeded',
      waitMs: 40,
      processMs: 12,
    });
  });

  it('threw → retried after the backoff for its attempt', () => {
    const error = new Error('boom');
    expect(afterRun(runFacts(threw(error), { receiveCount: 2, attempt: 2 }))).toEqual({
      kind: 'retry',
      error,
      delayMs: 5_000,
      processMs: 7,
      abandoned: false,
    });
  });

  it('threw on the receive that reaches maxReceiveCount → dead-lettered as retries-exhausted with the last error', () => {
    const out = afterRun(runFacts(threw(new Error('boom')), { receiveCount: 5, attempt: 5 }));
    expect(out).toMatchObject({ kind: 'dead-letter', reason: 'retries-exhausted', detail: 'failed on attempt 5 of 5: Error: boom' });
  });

  it('after a re-send the detail says both the attempt and the receive', () => {
    const out = afterRun(runFacts(threw(new Error('boom')), { receiveCount: 5, attempt: 7 }));
    expect(out).toMatchObject({ kind: 'dead-letter', detail: 'failed on attempt 7 (receive 5 of 5 after a re-send): Error: boom' });
  });

  it('threw with no redrive policy → always retried', () => {
    expect(afterRun(runFacts(threw(new Error('x')), { receiveCount: 50, attempt: 50, maxReceiveCount: undefined }))).toMatchObject({
      kind: 'retry',
    });
  });

  it('UnrecoverableError → dead-lettered at once', () => {
    const error = new UnrecoverableError('bad input');
    expect(afterRun(runFacts(threw(error)))).toEqual({
      kind: 'dead-letter',
      reason: 'unrecoverable',
      detail: 'bad input',
      error,
      processMs: 7,
    });
  });

  it('RetryLaterError → retried after its own delay, even at the last receive (settle re-sends it then)', () => {
    const error = new RetryLaterError(2_500);
    expect(afterRun(runFacts(threw(error), { receiveCount: 5, attempt: 5 }))).toEqual({
      kind: 'retry',
      error,
      delayMs: 2_500,
      processMs: 7,
      abandoned: false,
    });
  });

  it('timed out → a failed attempt; abandoned when the handler did not settle within the grace', () => {
    expect(afterRun(runFacts(aborted('JOB_TIMEOUT')))).toMatchObject({ kind: 'retry', delayMs: 1_000, abandoned: false });
    expect(afterRun(runFacts(aborted('JOB_TIMEOUT', true)))).toMatchObject({ kind: 'retry', abandoned: true });
    expect(afterRun(runFacts(aborted('JOB_TIMEOUT'), { receiveCount: 5 }))).toMatchObject({
      kind: 'dead-letter',
      reason: 'retries-exhausted',
    });
  });

  it('shutdown deadline → handed back at once', () => {
    expect(afterRun(runFacts(aborted('SHUTDOWN')))).toEqual({
      kind: 'hand-back',
      reason: 'signal: SHUTDOWN',
      delaySeconds: 0,
      abandoned: false,
    });
    expect(afterRun(runFacts(aborted('SHUTDOWN', true)))).toMatchObject({ kind: 'hand-back', abandoned: true });
  });

  it("a Lambda invocation's deadline → re-sent, this receive not counted, the run counted as one that never finished", () => {
    const held = {
      fifo: false,
      receiveCount: 5,
      maxReceiveCount: 5,
      unfinished: { runs: 1, last: 'old' },
      claimToken: 'tok',
      lockTtlSeconds: 35,
    };
    expect(afterRun({ ...runFacts(aborted('DEADLINE'), { receiveCount: 5 }), held })).toEqual({
      kind: 'hand-back',
      reason: 'signal: DEADLINE',
      delaySeconds: 0,
      abandoned: false,
      notAnAttempt: true,
      unfinishedRuns: { runs: 2, last: 'tok' },
    });
    // Its handler ignored the signal and may still run: back once its claim has lapsed.
    expect(afterRun({ ...runFacts(aborted('DEADLINE', true)), held })).toMatchObject({ delaySeconds: 35, abandoned: true });
    // FIFO: a copy would join the back of its group, so it goes back by visibility (the receive counted);
    // cut short on its last receive, to the DLQ with the reason.
    expect(afterRun({ ...runFacts(aborted('DEADLINE')), held: { ...held, fifo: true } })).toMatchObject({
      kind: 'dead-letter',
      reason: 'retries-exhausted',
    });
    expect(afterRun({ ...runFacts(aborted('DEADLINE')), held: { ...held, fifo: true, receiveCount: 2 } })).toEqual({
      kind: 'hand-back',
      reason: 'signal: DEADLINE',
      delaySeconds: 0,
      abandoned: false,
    });
    // Never started: re-sent with the runs it carried, none added.
    expect(cutShort('deadline', held, { ran: false, abandoned: false })).toMatchObject({
      notAnAttempt: true,
      unfinishedRuns: { runs: 1, last: 'old' },
    });
  });

  it('cancelled while it ran → deleted as cancelled, never retried: stopped, threw on its signal, or abandoned', () => {
    expect(afterRun(runFacts(aborted('CANCELLED')))).toEqual({ kind: 'cancelled', reason: 'signal: CANCELLED', abandoned: false });
    expect(afterRun(runFacts(aborted('CANCELLED', true)))).toMatchObject({ kind: 'cancelled', abandoned: true });
    // On its last receive too: a cancel is not a failure, so it never goes to the DLQ.
    expect(afterRun(runFacts(aborted('CANCELLED'), { receiveCount: 5 }))).toMatchObject({ kind: 'cancelled' });
  });

  it('lease lost → left alone, even if the handler then returned', () => {
    expect(afterRun(runFacts(aborted('LEASE_LOST')))).toEqual({ kind: 'lost', reason: 'signal: LEASE_LOST', abandoned: false });
  });
});

const permitFacts = (over: Partial<PermitFacts>): PermitFacts => ({
  permit: 2,
  tenant: 'acme',
  cap: 5,
  capDelaySeconds: 7,
  canWait: false,
  waitRetryMs: 500,
  receives: { count: 1, attempt: 1, max: 10 },
  leaseLost: false,
  stopping: false,
  ...over,
});

const capReason = 'tenant "acme" has 5 job(s) running, its cap';
const capWait: Outcome = { kind: 'wait', reason: capReason, limit: 'tenant-cap', until: { permitOf: 'acme', retryMs: 500 } };

describe('mayHold: whether a job may wait held, by its receives (count of max, attempt across re-sends)', () => {
  const rows: [string, Receives, boolean][] = [
    ['half its receives spent (5 of 10)', { count: 5, attempt: 5, max: 10 }, true],
    ['past half (6 of 10) → not held', { count: 6, attempt: 6, max: 10 }, false],
    [
      'past half, a copy carrying half a budget of prior receives (deferred so once) → held: once per budget',
      { count: 6, attempt: 11, max: 10 },
      true,
    ],
    ['an odd budget: 3 of 5 is past half → not held', { count: 3, attempt: 3, max: 5 }, false],
    ['an odd budget: the copy deferred so (2 prior receives) → held on its third receive', { count: 3, attempt: 5, max: 5 }, true],
    ['maxReceiveCount 1: no receive to spare, a re-send would come back the same for ever → held', { count: 1, attempt: 1, max: 1 }, true],
    ['no redrive policy → held, however often received', { count: 40, attempt: 40, max: undefined }, true],
  ];
  it.each(rows)('%s', (_name, receives, expected) => {
    expect(mayHold(receives)).toBe(expected);
  });
});

describe('afterPermit: the tenant cap, one row per rule', () => {
  const rows: [string, Partial<PermitFacts>, Outcome | 'run'][] = [
    ['a permit → run', {}, 'run'],
    ['memcached cannot be asked → run without the cap rather than stuck', { permit: 'unavailable' }, 'run'],
    ['every permit taken, room to wait here → waits, held (no receive spent, nothing re-sent)', { permit: 'full', canWait: true }, capWait],
    [
      'every permit taken, no room left to wait here → deferred (re-sent, the receive not counted)',
      { permit: 'full' },
      { kind: 'defer', reason: capReason, delaySeconds: 7, limit: 'tenant-cap' },
    ],
    [
      'every permit taken, room to wait, but past half its receives before the DLQ (6 of 10) → deferred (held, each worker that died would spend one)',
      { permit: 'full', canWait: true, receives: { count: 6, attempt: 6, max: 10 } },
      { kind: 'defer', reason: `${capReason}; past half its receives before the DLQ, not held`, delaySeconds: 7, limit: 'tenant-cap' },
    ],
    [
      'every permit taken, room to wait, half its receives spent (5 of 10) → waits',
      { permit: 'full', canWait: true, receives: { count: 5, attempt: 5, max: 10 } },
      capWait,
    ],
    [
      'lease lost meanwhile → lost, whatever the permit',
      { permit: 'full', leaseLost: true },
      { kind: 'lost', reason: 'the lease was lost while a permit of its tenant was being taken', abandoned: false },
    ],
    [
      'the worker began stopping → handed back at once',
      { stopping: true },
      { kind: 'hand-back', reason: 'worker is stopping', delaySeconds: 0, abandoned: false },
    ],
  ];
  it.each(rows)('%s', (_name, facts, expected) => {
    expect(afterPermit(permitFacts(facts))).toEqual(expected);
  });
});

const PAUSED_AT = Date.UTC(2027, 0, 4, 9, 0, 0);
const pauseFacts = (over: Partial<PauseFacts>): PauseFacts => ({
  mark: { scope: { job: 'charge-invoice' }, by: 'ana', reason: 'payments API down', at: PAUSED_AT },
  now: PAUSED_AT + 60_000,
  canWait: false,
  holdLeftMs: 11 * 3_600_000,
  fifo: false,
  longestDelaySeconds: 900,
  receives: { count: 1, attempt: 1, max: 10 },
  leaseLost: false,
  stopping: false,
  ...over,
});
const pauseReason = 'job "charge-invoice" is paused by ana: payments API down';
const pauseWait: Outcome = { kind: 'wait', reason: pauseReason, limit: 'paused', until: { resumeOf: 'job:charge-invoice' } };

describe('afterPause: a pause in force when its turn came, one row per rule', () => {
  const rows: [string, Partial<PauseFacts>, Outcome][] = [
    ['room to wait here within the free room → waits for the resume, held (no receive spent)', { canWait: true }, pauseWait],
    [
      'no room → deferred for as long as the pause has lasted (60 s), not an attempt',
      {},
      { kind: 'defer', reason: pauseReason, delaySeconds: 60, limit: 'paused' },
    ],
    [
      'paused a moment ago → deferred for the shortest delay (10 s)',
      { now: PAUSED_AT + 2_000 },
      { kind: 'defer', reason: pauseReason, delaySeconds: 10, limit: 'paused' },
    ],
    [
      'paused for hours → deferred for at most pausedDelaySeconds',
      { now: PAUSED_AT + 5 * 3_600_000, longestDelaySeconds: 600 },
      { kind: 'defer', reason: pauseReason, delaySeconds: 600, limit: 'paused' },
    ],
    [
      'a timed pause ending in 20 s → deferred until about then, and the reason says when',
      { mark: { scope: { tenant: 'acme' }, by: 'bo', at: PAUSED_AT, until: PAUSED_AT + 80_000 } },
      {
        kind: 'defer',
        reason: `tenant "acme" is paused until ${new Date(PAUSED_AT + 80_000).toISOString()} by bo`,
        delaySeconds: 20,
        limit: 'paused',
      },
    ],
    [
      'room to wait, but past half its receives before the DLQ → deferred (a fresh count)',
      { canWait: true, receives: { count: 6, attempt: 6, max: 10 } },
      { kind: 'defer', reason: `${pauseReason}; past half its receives before the DLQ, not held`, delaySeconds: 60, limit: 'paused' },
    ],
    ['FIFO (its queue paused) → waits in place, its group behind it, whatever the room', { fifo: true }, pauseWait],
    [
      'room to wait, but under a minute of its 12-hour hold left → deferred (re-sent, a fresh count), not held on',
      { canWait: true, holdLeftMs: 30_000 },
      { kind: 'defer', reason: pauseReason, delaySeconds: 60, limit: 'paused' },
    ],
    [
      'FIFO at the end of its hold → handed back after the delay (its group’s order kept, a receive spent)',
      { fifo: true, holdLeftMs: 30_000 },
      { kind: 'hand-back', reason: `${pauseReason}: held as long as SQS allows`, delaySeconds: 60, abandoned: false },
    ],
    [
      'a queue with maxReceiveCount 1 → never held (a worker that died would spend its only receive): deferred',
      { canWait: true, receives: { count: 1, attempt: 1, max: 1 } },
      { kind: 'defer', reason: pauseReason, delaySeconds: 60, limit: 'paused' },
    ],
    [
      'lease lost meanwhile → lost',
      { leaseLost: true },
      { kind: 'lost', reason: 'the lease was lost while its pause was being read', abandoned: false },
    ],
    [
      'the worker began stopping → handed back at once',
      { stopping: true },
      { kind: 'hand-back', reason: 'worker is stopping', delaySeconds: 0, abandoned: false },
    ],
  ];
  it.each(rows)('%s', (_name, facts, expected) => {
    expect(afterPause(pauseFacts(facts))).toEqual(expected);
  });
});

const rateFacts = (over: Partial<RateFacts>): RateFacts => ({
  slot: { at: 1_000, reserved: true },
  now: 1_000,
  what: 'job "sync"',
  perSecond: 50,
  canWait: false,
  waitLimitMs: 11 * 3_600_000,
  fifo: false,
  receives: { count: 1, attempt: 1, max: 10 },
  leaseLost: false,
  stopping: false,
  ...over,
});

describe('afterRateSlot: the job rate limit, one row per rule', () => {
  const reason = 'job "sync" is at its rate limit (50/s)';
  const rows: [string, Partial<RateFacts>, Outcome | 'run'][] = [
    ['its slot is now → run', {}, 'run'],
    ['its slot is past (taken late, within the allowance) → run', { now: 1_050 }, 'run'],
    ['memcached cannot be asked → run without the limit rather than stuck', { slot: 'unavailable' }, 'run'],
    [
      'its slot is ahead, room to wait here → waits for it, held (no receive spent, nothing re-sent)',
      { slot: { at: 1_400, reserved: true }, canWait: true },
      { kind: 'wait', reason, limit: 'rate-limit', until: { at: 1_400 } },
    ],
    [
      'no slot free as far as it looked → waits, to ask again then',
      { slot: { at: 9_000, reserved: false }, now: 9_000, canWait: true },
      { kind: 'wait', reason, limit: 'rate-limit', until: { at: 9_000 } },
    ],
    [
      'its slot is past what its hold allows → deferred (at most 15 minutes), carrying its slot',
      { slot: { at: 1_000 + 3_600_001, reserved: true }, canWait: true, waitLimitMs: 3_600_000 },
      { kind: 'defer', reason, delaySeconds: 900, limit: 'rate-limit', rateSlotAt: 3_601_001 },
    ],
    [
      'its slot is ahead, no room left to wait here → deferred until about then (at least 1 s), carrying its slot',
      { slot: { at: 3_500, reserved: true } },
      { kind: 'defer', reason, delaySeconds: 3, limit: 'rate-limit', rateSlotAt: 3_500 },
    ],
    [
      'its slot is ahead, room to wait, but past half its receives before the DLQ → deferred, carrying its slot',
      { slot: { at: 3_500, reserved: true }, canWait: true, receives: { count: 6, attempt: 6, max: 10 } },
      {
        kind: 'defer',
        reason: `${reason}; past half its receives before the DLQ, not held`,
        delaySeconds: 3,
        limit: 'rate-limit',
        rateSlotAt: 3_500,
      },
    ],
    [
      'FIFO past half its receives: waits anyway (its group waits with it; a re-sent copy would join the back)',
      { slot: { at: 1_400, reserved: true }, fifo: true, receives: { count: 9, attempt: 9, max: 10 } },
      { kind: 'wait', reason, limit: 'rate-limit', until: { at: 1_400 } },
    ],
    [
      'FIFO, no room: waits anyway (a re-sent copy would join the back of its group)',
      { slot: { at: 1_400, reserved: true }, fifo: true },
      { kind: 'wait', reason, limit: 'rate-limit', until: { at: 1_400 } },
    ],
    [
      'FIFO, its slot past what its hold allows → handed back by visibility (a receive spent, the order kept)',
      { slot: { at: 5_000, reserved: true }, fifo: true, canWait: true, waitLimitMs: 1_000 },
      { kind: 'hand-back', reason: `${reason}: its turn is past the 12-hour hold`, delaySeconds: 4, abandoned: false },
    ],
    [
      'lease lost meanwhile → lost',
      { leaseLost: true },
      { kind: 'lost', reason: 'the lease was lost while its rate limit was being asked', abandoned: false },
    ],
    [
      'the worker began stopping → handed back at once',
      { stopping: true },
      { kind: 'hand-back', reason: 'worker is stopping', delaySeconds: 0, abandoned: false },
    ],
  ];
  it.each(rows)('%s', (_name, facts, expected) => {
    expect(afterRateSlot(rateFacts(facts))).toEqual(expected);
  });
});

describe('before running: poison, copies, internal errors', () => {
  it('not a job this worker can run → dead-lettered with the reason and the detail', () => {
    expect(poisoned('unknown-job', 'no job named "x"')).toEqual({ kind: 'dead-letter', reason: 'unknown-job', detail: 'no job named "x"' });
  });
  it('a copy re-sent only to be counted → deleted as dead-lettered, never run', () => {
    expect(DEAD_LETTERED_COPY).toEqual({ kind: 'duplicate', state: 'dead-lettered' });
  });
  it('an internal error → handed back after the given delay', () => {
    expect(internalError(new Error('bug'), 30)).toEqual({
      kind: 'hand-back',
      reason: 'internal error: bug',
      delaySeconds: 30,
      abandoned: false,
    });
  });
  it('lost while waiting → left alone', () => {
    expect(leaseLost('it waited in its batch')).toEqual({
      kind: 'lost',
      reason: 'the lease was lost while it waited in its batch',
      abandoned: false,
    });
  });
});

describe('onceLost: the lease was lost after the outcome was decided', () => {
  const error = new Error('boom');
  const rows: [string, Outcome, Outcome['kind']][] = [
    ['a success is still deleted', { kind: 'succeeded', waitMs: 1, processMs: 2 }, 'succeeded'],
    ['a duplicate is still deleted', { kind: 'duplicate', state: 'completed' }, 'duplicate'],
    ['a cancelled job is still deleted', { kind: 'cancelled', reason: 'cancelled before it ran', abandoned: false }, 'cancelled'],
    ['a retry is left to the new holder', { kind: 'retry', error, delayMs: 1_000, processMs: 2, abandoned: false }, 'lost'],
    ['a hand-back is left to the new holder', handedBackNow('worker is stopping'), 'lost'],
    ['a deferral is left to the new holder', { kind: 'defer', reason: 'cap', delaySeconds: 5, limit: 'tenant-cap' }, 'lost'],
    ['a dead-letter is left to the new holder', poisoned('invalid-args', 'args.x: required'), 'lost'],
  ];
  it.each(rows)('%s', (_name, outcome, kind) => {
    expect(onceLost(outcome).kind).toBe(kind);
  });
  it('keeps an abandoned handler abandoned (its lock is then kept until its TTL)', () => {
    expect(onceLost({ kind: 'retry', error, delayMs: 1_000, processMs: 2, abandoned: true })).toMatchObject({
      kind: 'lost',
      abandoned: true,
    });
  });
});

describe('FIFO groups', () => {
  const error = new Error('boom');
  const retry: Outcome = { kind: 'retry', error, delayMs: 1_000, processMs: 2, abandoned: false };
  it('a message that comes back blocks its group; one that ends frees it', () => {
    const wait: Outcome = { kind: 'wait', reason: 'rate', limit: 'rate-limit', until: { at: 5 } };
    // A wait settled (not kept: stopping, or its lease lost) is handed back: its group waits for it.
    expect([retry, handedBackNow('x'), leaseLost('x'), wait].map(blocksGroup)).toEqual([true, true, true, true]);
    expect(
      [
        { kind: 'succeeded', waitMs: 1, processMs: 1 } as Outcome,
        DEAD_LETTERED_COPY,
        poisoned('invalid-json', 'x'),
        { kind: 'defer', reason: 'cap', delaySeconds: 5, limit: 'tenant-cap' } as Outcome,
        { kind: 'cancelled', reason: 'x', abandoned: false } as Outcome,
      ].map(blocksGroup),
    ).toEqual([false, false, false, false, false]);
  });
  it('a failed FIFO job is retried in place, unless abandoned, lost, a batch item, not FIFO, or in a Lambda invocation', () => {
    const facts = { fifo: true, leaseLost: false, batchItem: false, holds: true };
    expect(retriesInPlace(retry, facts)).toBe(true);
    expect(retriesInPlace(retry, { ...facts, holds: false }), 'a Lambda invocation holds nothing past its walk').toBe(false);
    expect(retriesInPlace(retry, { ...facts, fifo: false })).toBe(false);
    expect(retriesInPlace(retry, { ...facts, leaseLost: true })).toBe(false);
    expect(retriesInPlace(retry, { ...facts, batchItem: true })).toBe(false);
    expect(retriesInPlace({ ...retry, abandoned: true } as Outcome, facts)).toBe(false);
    expect(retriesInPlace(handedBackNow('x'), facts)).toBe(false);
  });
});

describe('ifFails: when an act of settle fails', () => {
  it('the DLQ send failed → handed back for one visibility timeout, not marked', () => {
    expect(ifFails('dead-letter send', 30)).toEqual({ seconds: 30, reason: 'the DLQ send failed', deadLettered: false });
  });
  it("a fan-out child's count failed → back soon to be counted", () => {
    expect(ifFails('count', 30)).toEqual({ seconds: COUNT_RETRY_SECONDS, reason: 'its fan-out count failed', deadLettered: false });
  });
  it('its count failed after it was dead-lettered → back soon, marked so a re-sent copy is counted and never run', () => {
    expect(ifFails('count after dead-letter', 30)).toEqual({
      seconds: COUNT_RETRY_SECONDS,
      reason: 'its fan-out count failed',
      deadLettered: true,
    });
  });
});
