import { setTimeout as sleepFor } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { execute } from '../../../../src/worker/run/execute.js';
import { Lease } from '../../../../src/worker/hold/lease.js';

const lease = () =>
  new Lease(
    {
      queueUrl: 'q',
      messageId: 'm',
      receiptHandle: 'r',
      body: '',
      receiveCount: 1,
      sentAt: 0,
      groupId: undefined,
      attributes: {},
    },
    0,
    30,
    15_000,
  );
const options = { timeoutMs: undefined, jobName: 't', graceMs: 200 };

describe('execute', () => {
  it('answers how the handler ended', async () => {
    expect(await execute(() => 'ok', lease(), options)).toMatchObject({ kind: 'returned', value: 'ok' });
    expect(await execute(() => Promise.reject(new Error('no')), lease(), options)).toMatchObject({
      kind: 'threw',
      error: { message: 'no' },
    });
    expect(
      await execute(
        () => {
          throw 'a string';
        },
        lease(),
        options,
      ),
    ).toMatchObject({ kind: 'threw', error: { message: 'a string' } });
  });

  it('a handler that aborts its own run and then returns ends aborted; a thenable that is not a Promise is followed', async () => {
    const l = lease();
    const out = await execute(
      () => {
        l.abort('CANCELLED', 'cancelled by the handler');
        return 'ignored';
      },
      l,
      options,
    );
    expect(out).toMatchObject({ kind: 'aborted', code: 'CANCELLED', abandoned: false });
    // biome-ignore lint/suspicious/noThenProperty: a thenable on purpose, as a handler may return
    const thenable = { then: (resolve: (v: string) => void) => setTimeout(() => resolve('later'), 5) };
    expect(await execute(() => thenable, lease(), options)).toMatchObject({ kind: 'returned', value: 'later' });
  });

  it('aborts the lease on timeout; a handler that honours its signal is not abandoned', async () => {
    const l = lease();
    const out = await execute(() => sleepFor(5_000, undefined, { signal: l.signal }), l, { ...options, timeoutMs: 50 });
    expect(out).toMatchObject({ kind: 'aborted', code: 'JOB_TIMEOUT', abandoned: false });
  });

  it('abandons a handler still running after the grace period, and answers without waiting for it', async () => {
    const l = lease();
    let handlerDone = false;
    const out = await execute(() => sleepFor(1_000).then(() => (handlerDone = true)), l, { ...options, timeoutMs: 50 });
    expect(out).toMatchObject({ kind: 'aborted', code: 'JOB_TIMEOUT', abandoned: true });
    expect(handlerDone).toBe(false); // answered while the handler still ran
  });

  it('follows the signal even when the handler swallows the abort and returns', async () => {
    const l = lease();
    const run = execute(() => sleepFor(5_000, undefined, { signal: l.signal }).catch(() => 'swallowed'), l, options);
    l.abort('SHUTDOWN', 'stopping');
    expect(await run).toMatchObject({ kind: 'aborted', code: 'SHUTDOWN', abandoned: false });
  });

  it('makes no signal for a handler that never asks for one; one asked for after the abort has fired already, with its reason', async () => {
    const l = lease();
    const out = await execute(() => sleepFor(1_000), l, { ...options, timeoutMs: 20, graceMs: 10 });
    expect(out).toMatchObject({ kind: 'aborted', code: 'JOB_TIMEOUT', reason: { message: 'job "t" timed out after 20 ms' } });
    expect(l.signal.aborted).toBe(true);
    expect(l.signal.reason).toMatchObject({ code: 'JOB_TIMEOUT' });
  });

  it('the first abort reason wins', async () => {
    const l = lease();
    const run = execute(() => sleepFor(5_000, undefined, { signal: l.signal }), l, options);
    l.abort('LEASE_LOST', 'gone');
    l.abort('SHUTDOWN', 'stopping');
    expect(await run).toMatchObject({ kind: 'aborted', code: 'LEASE_LOST' });
    expect(l.lost).toBe(true);
  });

  it('never starts a handler whose signal already fired; a new run (FIFO retry here) gets a fresh signal', async () => {
    const l = lease();
    await execute(() => sleepFor(5_000, undefined, { signal: l.signal }), l, { ...options, timeoutMs: 20 });
    let started = false;
    const again = await execute(
      () => {
        started = true;
      },
      l,
      options,
    );
    expect(again).toMatchObject({ kind: 'aborted', code: 'JOB_TIMEOUT' });
    expect(started).toBe(false);
    l.newRun();
    expect(await execute(() => 'ok', l, options)).toMatchObject({ kind: 'returned' });
  });

  it('a lost lease stays lost even when its signal fired earlier for another reason', () => {
    const l = lease();
    l.abort('JOB_TIMEOUT', 'slow');
    l.abort('LEASE_LOST', 'visibility ran out');
    expect(l.lost).toBe(true);
    l.newRun();
    expect(l.signal.aborted).toBe(true); // a lost lease never runs again
  });
});
