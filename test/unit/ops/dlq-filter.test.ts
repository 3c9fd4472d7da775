import { describe, expect, it } from 'vitest';
import { ATTR_DLQ_AT, ATTR_DLQ_ERROR, ATTR_DLQ_REASON } from '../../../src/core/dead-letter.js';
import { ATTR_JOB, ATTR_JOB_ID } from '../../../src/core/envelope.js';
import type { DeadLetter } from '../../../src/ops/dlq.js';
import { deadLetterFilterSchema, describeFilter, isFiltered, matchesFilter } from '../../../src/ops/dlq-filter.js';
import { scanDeadLetters } from '../../../src/ops/dlq-scan.js';
import { purgeDeadLetters } from '../../../src/ops/purge.js';
import { MemoryQueue } from '../../../src/testing/memory-queue.js';

const letter = (over: Partial<DeadLetter> = {}): DeadLetter => ({
  messageId: 'm1',
  jobName: 'report',
  jobId: 'r-1',
  event: undefined,
  tenant: 'acme',
  receiveCount: 3,
  reason: 'handler-failed',
  error: 'Error: Disk full on /var',
  deadLetteredAt: '2026-11-25T10:00:00.000Z',
  sourceQueueUrl: 'http://q/1/jobs',
  sentAt: '2026-11-25T09:00:00.000Z',
  ...over,
});
const now = Date.parse('2026-11-25T10:10:00.000Z'); // 600 s after it was dead-lettered

describe('matchesFilter', () => {
  it('matches when every field given matches: names exactly, the error by text in any case, the age from when it was dead-lettered', () => {
    expect(matchesFilter(letter(), {}, now)).toBe(true);
    expect(matchesFilter(letter(), { job: 'report', tenant: 'acme', reason: 'handler-failed', id: 'r-1' }, now)).toBe(true);
    expect(matchesFilter(letter(), { job: 'repor' }, now)).toBe(false);
    expect(matchesFilter(letter(), { tenant: 'globex' }, now)).toBe(false);
    expect(matchesFilter(letter(), { error: 'disk FULL' }, now)).toBe(true);
    expect(matchesFilter(letter({ error: undefined }), { error: 'disk' }, now)).toBe(false);
    expect(matchesFilter(letter(), { olderThanSeconds: 599 }, now)).toBe(true);
    expect(matchesFilter(letter(), { olderThanSeconds: 601 }, now)).toBe(false);
    expect(matchesFilter(letter(), { newerThanSeconds: 601 }, now)).toBe(true);
    expect(matchesFilter(letter(), { newerThanSeconds: 599 }, now)).toBe(false);
    // Moved by SQS's redrive (no sqsjobs-dlq-at): its age is from when it was sent.
    expect(matchesFilter(letter({ deadLetteredAt: undefined }), { olderThanSeconds: 4_000 }, now)).toBe(true);
  });

  it('is described in words and checked with errors that name the field and the rule', () => {
    expect(describeFilter({})).toBe('everything');
    expect(describeFilter({ job: 'report', olderThanSeconds: 60 })).toBe('job=report, olderThanSeconds=60');
    expect(isFiltered({})).toBe(false);
    expect(isFiltered({ tenant: 'a' })).toBe(true);
    const bad = deadLetterFilterSchema.safeParse({ olderThanSeconds: -1 });
    expect(bad.success).toBe(false);
    expect(bad.error?.issues[0]).toMatchObject({ path: ['olderThanSeconds'], message: 'must be >= 0' });
    expect(deadLetterFilterSchema.safeParse({ color: 'red' }).success).toBe(false);
  });
});

describe('scanning and purging a filtered set (in-memory queue)', () => {
  const text = (v: string) => ({ DataType: 'String', StringValue: v });
  async function dlqWith(n: number) {
    const memory = new MemoryQueue();
    const dlq = memory.create('jobs-dlq');
    for (let i = 0; i < n; i++) {
      await memory.send(dlq, {
        body: JSON.stringify({ v: 1, id: `j-${i}`, job: 'report', args: { i }, tenant: i % 2 === 0 ? 'even' : 'odd' }),
        attributes: {
          [ATTR_JOB]: text('report'),
          [ATTR_JOB_ID]: text(`j-${i}`),
          [ATTR_DLQ_REASON]: text('handler-failed'),
          [ATTR_DLQ_ERROR]: text(i % 2 === 0 ? 'timeout' : 'disk full'),
          [ATTR_DLQ_AT]: text('2026-11-25T10:00:00.000Z'),
        },
      });
    }
    return { memory, dlq };
  }

  it('a scan keeps up to the limit of those matched, with each body and attribute, and consumes nothing', async () => {
    const { memory, dlq } = await dlqWith(25);
    const scan = await scanDeadLetters(memory, dlq, { limit: 5, filter: { tenant: 'odd' } });
    expect(scan.matches).toHaveLength(5);
    expect(scan.matches.every((m) => m.letter.tenant === 'odd' && m.attributes['sqsjobs-dlq-error'] === 'disk full')).toBe(true);
    expect(JSON.parse(scan.matches[0]!.body).args).toHaveProperty('i');
    expect(scan.complete).toBe(false);
    const all = await scanDeadLetters(memory, dlq, { limit: 100, filter: { tenant: 'odd' } });
    expect(all).toMatchObject({ scanned: 25, complete: true });
    expect(all.matches).toHaveLength(12);
    expect(memory.peek(dlq)).toHaveLength(25);
  });

  it('a dry run counts; a purge deletes exactly the matched ones, at most `limit`, and leaves the rest visible', async () => {
    const { memory, dlq } = await dlqWith(25);
    const dry = await purgeDeadLetters(memory, { dlqUrl: dlq, filter: { error: 'TIMEOUT' }, dryRun: true });
    expect(dry).toMatchObject({ matched: 13, deleted: 0 });
    expect(memory.peek(dlq)).toHaveLength(25);
    const some = await purgeDeadLetters(memory, { dlqUrl: dlq, filter: { error: 'timeout' }, limit: 10 });
    expect(some).toMatchObject({ matched: 10, deleted: 10 });
    const rest = await purgeDeadLetters(memory, { dlqUrl: dlq, filter: { error: 'timeout' } });
    expect(rest).toMatchObject({ matched: 3, deleted: 3, passedOver: { notChosen: 12 } });
    const left = await scanDeadLetters(memory, dlq, { limit: 100 });
    expect(left.matches.map((m) => m.letter.tenant)).toEqual(Array(12).fill('odd'));
  });

  it('`only` acts on the messages a dry run counted, never on others the filter matches since; `complete` says it saw the whole DLQ', async () => {
    const { memory, dlq } = await dlqWith(6);
    const dry = await purgeDeadLetters(memory, { dlqUrl: dlq, filter: { tenant: 'even' }, dryRun: true });
    const counted = new Set(dry.skipped.map((s) => s.letter.messageId));
    expect(counted.size).toBe(3);
    // One more matching dead letter arrives after the dry run.
    await memory.send(dlq, { body: JSON.stringify({ v: 1, id: 'late', job: 'report', args: {}, tenant: 'even' }), attributes: {} });
    const done = await purgeDeadLetters(memory, { dlqUrl: dlq, filter: { tenant: 'even' }, only: counted });
    expect(done).toMatchObject({ matched: 3, deleted: 3, complete: true });
    const left = await scanDeadLetters(memory, dlq, { limit: 100 });
    expect(left.matches.map((m) => m.letter.jobId).sort()).toEqual(['j-1', 'j-3', 'j-5', 'late']);
    const limited = await purgeDeadLetters(memory, { dlqUrl: dlq, limit: 1 });
    expect(limited).toMatchObject({ deleted: 1, complete: false });
  });
});
