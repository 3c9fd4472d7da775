import { describe, expect, it } from 'vitest';
import { CapTurns } from '../../../../src/worker/turns/cap-turns.js';

/** A tenant whose jobs started here every `everyMs`, `n` times, the last at `at`. */
function startedEvery(turns: CapTurns, tenant: string, everyMs: number, n: number, at: number): void {
  for (let i = n - 1; i >= 0; i--) turns.started(tenant, at - i * everyMs);
}

describe('CapTurns', () => {
  it('knows no rate before two starts', () => {
    const turns = new CapTurns();
    expect(turns.rate('a', 1_000)).toBeUndefined();
    turns.started('a', 1_000);
    expect(turns.rate('a', 1_000)).toBeUndefined();
    turns.started('a', 1_100);
    expect(turns.rate('a', 1_100)).toBeCloseTo(1 / 100);
  });

  it('counts a pause since the last start: a tenant that stopped starting is slower now', () => {
    const turns = new CapTurns();
    startedEvery(turns, 'a', 10, 5, 1_000);
    expect(turns.rate('a', 1_000)).toBeCloseTo(4 / 40);
    // 5 starts since 960, asked at 1960: 5 per 1000 ms.
    expect(turns.rate('a', 1_960)).toBeCloseTo(5 / 1_000);
  });

  it('remembers only the latest starts', () => {
    const turns = new CapTurns();
    startedEvery(turns, 'a', 1_000, 10, 10_000);
    startedEvery(turns, 'a', 10, 16, 20_000);
    expect(turns.rate('a', 20_000)).toBeCloseTo(15 / 150);
  });

  it('gives re-sent jobs successive turns after those waiting here', () => {
    const turns = new CapTurns();
    // 10 starts per second.
    startedEvery(turns, 'a', 100, 5, 10_000);
    // 10 wait here: the first re-sent one's turn is a second off.
    expect(turns.deferral('a', 10, 7, 10_000)).toBe(1);
    const delays = Array.from({ length: 30 }, () => turns.deferral('a', 10, 7, 10_000));
    // One turn each, 100 ms apart: about 10 per second of delay.
    expect(delays[0]).toBe(1);
    expect(delays.at(-1)).toBe(4);
    expect(delays.filter((d) => d === 2)).toHaveLength(10);
  });

  it('starts afresh once the turns given away are past', () => {
    const turns = new CapTurns();
    startedEvery(turns, 'a', 100, 5, 10_000);
    for (let i = 0; i < 50; i++) turns.deferral('a', 0, 7, 10_000);
    startedEvery(turns, 'a', 100, 16, 30_000);
    expect(turns.deferral('a', 0, 7, 30_000)).toBe(1);
  });

  it('forgets starts older than a minute: after an idle hour the rate is how fast it starts now', () => {
    const turns = new CapTurns();
    startedEvery(turns, 'a', 1_000, 14, 0);
    for (let i = 0; i < 5; i++) turns.deferral('a', 0, 7, 13_000);
    const back = 3_600_000;
    startedEvery(turns, 'a', 100, 16, back);
    expect(turns.rate('a', back)).toBeCloseTo(15 / 1_500);
    // 20 waiting at 10 starts per second: two seconds off.
    expect(turns.deferral('a', 20, 7, back)).toBe(2);
  });

  it('gives away no turn past 900 s: the copy comes back then and asks again', () => {
    const turns = new CapTurns();
    startedEvery(turns, 'a', 10_000, 3, 50_000); // one start per 10 s
    expect(turns.deferral('a', 100, 7, 50_000)).toBe(900);
    expect(turns.deferral('a', 1, 7, 50_000)).toBe(10); // the turn above was not given away
  });

  it('uses the fallback while the rate is unknown, and never delays past 900 s', () => {
    const turns = new CapTurns();
    expect(turns.deferral('a', 5, 7, 0)).toBe(7);
    startedEvery(turns, 'a', 10_000, 2, 0);
    expect(turns.deferral('a', 1_000, 7, 0)).toBe(900);
  });

  it('keeps tenants apart', () => {
    const turns = new CapTurns();
    startedEvery(turns, 'a', 100, 5, 10_000);
    expect(turns.rate('b', 10_000)).toBeUndefined();
    expect(turns.deferral('b', 0, 7, 10_000)).toBe(7);
  });

  it("knows whether other tenants share the queue: another's job among its last 100 received", () => {
    const turns = new CapTurns();
    expect(turns.contended('q', 'a')).toBe(false);
    turns.seen('q', 'a');
    turns.seen('q', 'b');
    turns.seen('q', 'a');
    expect(turns.contended('q', 'a')).toBe(true);
    expect(turns.contended('q', 'b')).toBe(true);
    expect(turns.contended('other-queue', 'a')).toBe(false);
    // One of b's among 99 of a's still counts: counted in messages, however slowly they come.
    for (let i = 0; i < 97; i++) turns.seen('q', 'a');
    expect(turns.contended('q', 'a')).toBe(true);
    turns.seen('q', 'a');
    expect(turns.contended('q', 'a')).toBe(true); // b's is the 100th from the end
    turns.seen('q', 'a');
    expect(turns.contended('q', 'a')).toBe(false); // now the 101st
    turns.seen('q', undefined); // a job without a tenant is someone else too
    expect(turns.contended('q', 'a')).toBe(true);
  });
});
