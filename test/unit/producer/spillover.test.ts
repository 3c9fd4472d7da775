import { describe, expect, it } from 'vitest';
import { SpilloverGate } from '../../../src/producer/spillover.js';

const gate = (weights: Record<string, number> = {}) =>
  new SpilloverGate({ queueUrl: 'http://127.0.0.1:4566/000000000000/jobs-spill', ratePerSecond: 2, burst: 3, weights });
const admitted = (g: SpilloverGate, key: string, n: number, now: number) =>
  Array.from({ length: n }, () => g.admit(key, now)).filter(Boolean).length;

describe('SpilloverGate', () => {
  it('lets a key send its burst to the main queue, spills the rest, and refills at its rate', () => {
    const g = gate();
    expect(admitted(g, 'acme', 10, 0)).toBe(3);
    expect(g.admit('acme', 499)).toBe(false); // 0.998 of a token
    expect(g.admit('acme', 500)).toBe(true); // one token after 0.5 s at 2/s
    expect(admitted(g, 'acme', 10, 10_000)).toBe(3); // never more than the burst
  });

  it('keeps keys apart: one key past its allowance does not spill another', () => {
    const g = gate();
    admitted(g, 'noisy', 1_000, 0);
    expect(g.admit('quiet', 0)).toBe(true);
  });

  it('scales a key by its weight', () => {
    const g = gate({ big: 3 });
    expect(admitted(g, 'big', 20, 0)).toBe(9);
    expect(admitted(g, 'big', 20, 1_000)).toBe(6); // 3 × 2 per second
    expect(admitted(g, 'small', 20, 0)).toBe(3);
  });

  it('stays bounded with very many keys', () => {
    const g = gate();
    for (let i = 0; i < 25_000; i++) g.admit(`k${i}`, 0);
    expect(g.admit('k0', 0)).toBe(true); // forgotten, so full again: no key is starved by the bound
  });
});
