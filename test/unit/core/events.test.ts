import { describe, expect, it } from 'vitest';
import { SafeEmitter } from '../../../src/core/events.js';

describe('SafeEmitter', () => {
  it('calls a once listener once and then forgets it', () => {
    const e = new SafeEmitter<{ ping: [number] }>(() => {});
    const seen: number[] = [];
    e.once('ping', (n) => seen.push(n));
    e.emit('ping', 1);
    e.emit('ping', 2);
    expect(seen).toEqual([1]);
    expect(e.listenerCount('ping')).toBe(0);
  });

  it('reports a throwing or rejecting listener and still calls the others', async () => {
    const errors: unknown[] = [];
    const e = new SafeEmitter<{ ping: [] }>((error) => errors.push(error));
    let called = 0;
    e.on('ping', () => {
      throw new Error('sync');
    });
    e.on('ping', (async () => {
      throw new Error('async');
    }) as () => void);
    e.on('ping', () => void called++);
    e.emit('ping');
    await new Promise((r) => setTimeout(r, 0));
    expect(called).toBe(1);
    expect(errors.map((x) => (x as Error).message).sort()).toEqual(['async', 'sync']);
  });
});
