import { beforeAll, expect, it } from 'vitest';
import { monotonic, runFanOutChaos } from '../../bench/fanout/chaos.js';
import { tcpAnswers } from '../helpers/net.js';
import { account, named, pick } from './harness.js';

const DYNAMODB = process.env.AWS_ENDPOINT_URL_DYNAMODB ?? 'http://127.0.0.1:4569';

beforeAll(async () => {
  const url = new URL(DYNAMODB);
  if (!(await tcpAnswers(url.hostname, Number(url.port)))) {
    throw new Error(`the fan-out fault test needs DynamoDB Local at ${DYNAMODB}: run it through scripts/faults.sh (which starts it)`);
  }
});

// A fan-out under SIGKILLs: its children counted once each (duplicates and redeliveries too), its
// completion sent and run exactly once, a parent killed while sending resuming at its cursor, and
// the progress a user reads never going backwards.
it('SIGKILLed workers during a fan-out with duplicated children: every child counted once, the completion runs once', async () => {
  named('fanout-crash');
  // ci: 1,000 (2,000 took 260-300 s on a loaded 2-core machine, against the 240 s deadline).
  const children = pick(1_000, 10_000);
  const r = await runFanOutChaos({
    children,
    // Small chunks make the parent send for longer than the first kill's wait at full scale, so it
    // is killed mid-fan-out and resumes at its cursor.
    chunkSize: pick(50, 20),
    killEveryMs: 3_000,
    dynamodb: DYNAMODB,
    // About 200 reads over the run (ci: ~40 s; full: ~2-3 min).
    readEveryMs: pick(150, 650),
    maxReads: 400,
    deadlineMs: pick(300_000, 900_000),
  });
  const runs = [...r.childRuns.values()];
  const killedWhileSending = r.parentRuns.filter((p) => p.fannedAt === undefined).length;
  const resumedAt = r.parentRuns.slice(1).map((p) => p.cursor);
  const reads = monotonic(r.reads);
  const report = await account(new Set(r.childIds), r.effects, r.dlqUrl, {
    kills: r.kills,
    workers: 2,
    duplicatesSent: r.duplicatesSent,
    childrenRunTwice: runs.filter((n) => n > 1).length,
    completionRuns: r.completionRuns.length,
    parentRuns: r.parentRuns.length,
    parentKilledWhileSending: killedWhileSending,
    resumedAtCursor: resumedAt.join(',') || 'none',
    statusReads: r.reads.length,
    readsBeforeEnd: r.reads.filter((x) => (x.ended ?? 0) < children).length,
    readsBackwards: reads.backwards,
    completionAfterMs: r.completedAt === undefined ? -1 : r.completedAt - r.enqueuedAt,
  });

  expect(r.kills).toBeGreaterThanOrEqual(2);
  expect(r.exitCodes).toEqual([0, 0]);
  expect(r.queueEmpty).toBe(true);
  // The completion ran exactly once, with every child counted once.
  expect(r.completionRuns).toHaveLength(1);
  const done = r.completionRuns[0]!.args;
  expect(done).toMatchObject({ parentId: r.parentId, total: children, failed: r.expectedFailed });
  expect(done.succeeded + done.failed).toBe(children);
  expect(r.final?.fanOut).toEqual({
    total: children,
    sent: children,
    succeeded: children - r.expectedFailed,
    failed: r.expectedFailed,
    completionSent: true,
  });
  expect(r.final?.state).toBe('completed');
  // No child lost; only the children that fail for good were dead-lettered (their count is the
  // completion's `failed`, so nothing else reached the DLQ).
  expect(report.lost).toBe(0);
  expect(runs.filter((n) => n === 0)).toHaveLength(0);
  expect(report.deadLettered).toBe(r.expectedFailed);
  // Progress as a user reads it never goes backwards, and reached the end.
  expect(reads.known).toBeGreaterThanOrEqual(50);
  expect(reads.backwards).toBe(0);
  expect(r.reads.at(-1)).toMatchObject({ state: 'completed', done: children, total: children });
  // Every resumed parent started at a cursor the store had saved (never past what was sent).
  for (const cursor of resumedAt) expect(cursor).toBeGreaterThanOrEqual(0);
  if (pick(false, true)) expect(killedWhileSending).toBeGreaterThanOrEqual(1);
}, 1_800_000);
