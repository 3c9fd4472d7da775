import { describe, expect, it, vi } from 'vitest';
import { chunk, classifyFailure, inBatches, retryTransient } from '../../../src/core/sqs-batch.js';

describe('SQS batch calls', () => {
  it('chunks by 10', () => {
    expect(chunk(Array.from({ length: 23 }, (_, i) => i)).map((c) => c.length)).toEqual([10, 10, 3]);
    expect(chunk([])).toEqual([]);
  });

  it.each([
    ['ReceiptHandleIsInvalid', true, 'lease-lost'],
    ['AWS.SimpleQueueService.MessageNotInflight', true, 'lease-lost'],
    ['InvalidParameterValueException', true, 'lease-lost'],
    ['InternalError', false, 'transient'],
    ['AccessDenied', true, 'fatal'],
  ] as const)('%s (sender fault: %s) is %s', (code, senderFault, kind) => {
    expect(classifyFailure(code, senderFault)).toBe(kind);
  });

  it('answers each failed item: the entries SQS refused, and every item of a call that threw', async () => {
    const items = Array.from({ length: 25 }, (_, i) => `i${i}`);
    let call = 0;
    const failed = await inBatches(items, async (batch) => {
      call++;
      if (call === 2) throw new Error('socket hang up');
      return batch[3] === undefined ? [] : [{ id: '3', code: 'InternalError', message: '', kind: 'transient' as const }];
    });
    // Calls 1 and 3 refuse their 4th entry (i3, i23); call 2 throws, so all of i10..i19 failed.
    expect(failed.map((f) => f.item).sort()).toEqual(['i3', ...items.slice(10, 20), 'i23'].sort());
    expect(failed.find((f) => f.item === 'i12')?.failure.kind).toBe('transient');
  });

  it('retries only transient failures, three tries in all, pausing 200 then 400 ms, and answers what still failed', async () => {
    vi.useFakeTimers();
    try {
      const calls: string[][] = [];
      const kindOf = (item: string) => (item === 'fatal' ? 'fatal' : 'transient');
      const done = retryTransient(['ok', 'fatal', 'flaky', 'stuck'], async (items) => {
        calls.push([...items]);
        const failing = items.filter((i) => i === 'fatal' || i === 'stuck' || (i === 'flaky' && calls.length === 1));
        return failing.map((item) => ({ item, failure: { id: item, code: 'X', message: '', kind: kindOf(item) } as const }));
      });
      await vi.advanceTimersByTimeAsync(199);
      expect(calls).toHaveLength(1);
      await vi.advanceTimersByTimeAsync(1);
      expect(calls).toHaveLength(2);
      await vi.advanceTimersByTimeAsync(400);
      const failed = await done;
      expect(calls).toEqual([['ok', 'fatal', 'flaky', 'stuck'], ['flaky', 'stuck'], ['stuck']]);
      expect(failed.map((f) => f.item)).toEqual(['fatal', 'stuck']);
    } finally {
      vi.useRealTimers();
    }
  });
});
