import { describe, expect, it } from 'vitest';
import { ATTR_DLQ_REASON } from '../../../src/core/dead-letter.js';
import { fromRecord, letterKey } from '../../../src/ops/archive-format.js';
import { ageText, archiveDeadLetters, checkRetention } from '../../../src/ops/dlq-archive.js';
import type { QueuePort } from '../../../src/ports/queue.js';
import { dlqSetup, MemoryArchive } from '../../helpers/memory-archive.js';

/*
 * The archive's rules on the in-memory queue and archive: what leaves the DLQ, when, and the DLQ's
 * retention. The replays from it: archive-replay.test.ts. On S3 and SQS themselves (LocalStack and
 * moto), with a crash between a write and its delete: test/integration/dlq-archive.test.ts.
 */

const text = (v: string) => ({ DataType: 'String', StringValue: v });
const DAY = 86_400_000;
const PREFIX = 'dlq/';

describe('archiveDeadLetters', () => {
  it("archives those sent to the DLQ before the age (SentTimestamp, not the job's first send), one record each, and deletes only those", async () => {
    const { memory, dlq, source, deadLetter, ids } = dlqSetup();
    const old = [await deadLetter('old-1', 5, { firstSentDays: 9 }), await deadLetter('old-2', 13)];
    // First sent 12 days ago, dead-lettered by the worker a day ago: SQS keeps it 13 more days.
    await deadLetter('young-1', 1, { firstSentDays: 12 });
    await deadLetter('young-2', 0);
    const store = new MemoryArchive();
    const told: string[] = [];
    const result = await archiveDeadLetters(memory, store, {
      dlqUrl: dlq,
      prefix: PREFIX,
      olderThanSeconds: 2 * 86_400,
      // Told after the write, before the delete: the record is there, the DLQ copy too.
      onArchived: (l, key) => told.push(`${l.jobId} ${key} ${store.objects.has(key)} ${ids(dlq).includes(l.jobId!)}`),
    });
    expect(result).toMatchObject({ archived: 2, notOldEnough: 2, stoppedBy: undefined, passedOver: { notChosen: 2 }, complete: true });
    expect(told.sort()).toEqual([`old-1 ${letterKey(PREFIX, old[0]!)} true true`, `old-2 ${letterKey(PREFIX, old[1]!)} true true`]);
    expect(store.keys()).toEqual(old.map((id) => letterKey(PREFIX, id)).sort());
    expect(ids(dlq)).toEqual(['young-1', 'young-2']);
    expect(memory.peek(dlq).every((m) => m.visibleInMs === 0)).toBe(true); // the young made visible again at the end
    const { m, record, letter } = fromRecord(store.objects.get(letterKey(PREFIX, old[0]!))!);
    expect(letter).toMatchObject({ jobName: 'refund', jobId: 'old-1', reason: 'retries-exhausted', sourceQueueUrl: source });
    expect(record.attributes[ATTR_DLQ_REASON]).toEqual(text('retries-exhausted'));
    // Both times kept: the DLQ send (what was measured) and the job's first send (for people).
    expect((Date.now() - Date.parse(record.sentAt)) / DAY).toBeCloseTo(5, 2);
    expect((Date.now() - Date.parse(record.firstSentAt)) / DAY).toBeCloseTo(9, 2);
    expect(m.messageId).toBe(old[0]);
  });

  it('leaves in the DLQ each message whose write failed, and stops when every write of a batch fails', async () => {
    const { memory, dlq, deadLetter, ids } = dlqSetup();
    const refused = await deadLetter('refused', 5);
    await deadLetter('kept', 5);
    const store = new MemoryArchive({ failPut: (key) => key.includes(refused) });
    const some = await archiveDeadLetters(memory, store, { dlqUrl: dlq, prefix: PREFIX, olderThanSeconds: 86_400 });
    expect(some).toMatchObject({ archived: 1, stoppedBy: undefined });
    expect(some.skipped).toEqual([
      {
        letter: expect.objectContaining({ jobId: 'refused' }),
        why: `not archived, left in the DLQ: could not write s3://memory/${letterKey(PREFIX, refused)}: access denied (AccessDenied)`,
      },
    ]);
    expect(ids(dlq)).toEqual(['refused']);

    for (let n = 0; n < 25; n++) await deadLetter(`n-${n}`, 5);
    const none = await archiveDeadLetters(memory, new MemoryArchive({ failPut: () => true }), {
      dlqUrl: dlq,
      prefix: PREFIX,
      olderThanSeconds: 0,
    });
    expect(none.archived).toBe(0);
    expect(none.stoppedBy).toMatch(/AccessDenied/);
    expect(none.matched).toBeLessThanOrEqual(10); // the first batch, then it stopped
    expect(ids(dlq)).toHaveLength(26);
    expect(memory.peek(dlq).every((m) => m.visibleInMs === 0)).toBe(true);
  });

  it('archived again after its delete failed (in both): the same key, then deleted; a dry run writes and deletes nothing', async () => {
    const { memory, dlq, deadLetter, ids } = dlqSetup();
    const id = await deadLetter('twice', 5);
    const noDeletes: QueuePort = {
      receive: (...a) => memory.receive(...a),
      changeVisibilityBatch: (...a) => memory.changeVisibilityBatch(...a),
      send: (...a) => memory.send(...a),
      sendBatch: (...a) => memory.sendBatch(...a),
      maximumMessageBytes: (...a) => memory.maximumMessageBytes(...a),
      deadLetterTarget: (...a) => memory.deadLetterTarget(...a),
      deleteBatch: async (_url, entries) =>
        entries.map((e) => ({ id: e.id, code: 'InternalError', message: '', kind: 'transient' as const })),
    };
    const store = new MemoryArchive();
    const dry = await archiveDeadLetters(memory, store, { dlqUrl: dlq, prefix: PREFIX, olderThanSeconds: 0, dryRun: true });
    expect(dry).toMatchObject({ matched: 1, archived: 0 });
    expect(store.puts).toBe(0);
    const first = await archiveDeadLetters(noDeletes, store, { dlqUrl: dlq, prefix: PREFIX, olderThanSeconds: 0 });
    expect(first.skipped.map((s) => s.why)).toEqual(['archived, but the DLQ copy could not be deleted: InternalError']);
    expect(ids(dlq)).toEqual(['twice']);
    const second = await archiveDeadLetters(memory, store, { dlqUrl: dlq, prefix: PREFIX, olderThanSeconds: 0 });
    expect(second.archived).toBe(1);
    expect(store.keys()).toEqual([letterKey(PREFIX, id)]);
    expect(ids(dlq)).toEqual([]);
  });

  it('tells those past --limit apart from those not old enough', async () => {
    const { memory, dlq, deadLetter } = dlqSetup();
    for (const id of ['a', 'b', 'c']) await deadLetter(id, 5);
    await deadLetter('young', 0);
    const result = await archiveDeadLetters(memory, new MemoryArchive(), {
      dlqUrl: dlq,
      prefix: PREFIX,
      olderThanSeconds: 86_400,
      limit: 1,
    });
    expect(result).toMatchObject({ archived: 1, notOldEnough: 1, passedOver: { notChosen: 3 } });
  });
});

describe('checkRetention', () => {
  const admin = (retentionSeconds: number | undefined) => ({ settings: async () => ({ messageRetentionSeconds: retentionSeconds }) });

  it('answers the margin between the age and the DLQ retention, tight under a day', async () => {
    expect(await checkRetention(admin(1_209_600), 'dlq-url', 10 * 86_400)).toEqual({
      retentionSeconds: 1_209_600,
      marginSeconds: 4 * 86_400,
      tight: false,
    });
    expect(await checkRetention(admin(345_600), 'dlq-url', 3 * 86_400 + 3600)).toMatchObject({ marginSeconds: 82_800, tight: true });
  });

  it('refuses an age at or past the retention, naming both (CONFIG_INVALID)', async () => {
    await expect(checkRetention(admin(345_600), 'http://sqs/q-dlq', 10 * 86_400)).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringMatching(
        /^--older-than 10d \(864000 s\) is not below the DLQ's MessageRetentionPeriod of 4d \(345600 s, http:\/\/sqs\/q-dlq\)/,
      ),
    });
    await expect(checkRetention(admin(345_600), 'q', 345_600)).rejects.toThrow(/is not below/);
  });

  it('writes ages as --older-than takes them', () => {
    expect([0, 59, 5400, 86_400, 1_209_600, 90_061].map(ageText)).toEqual(['0s', '59s', '1h30m', '1d', '14d', '1d1h1m1s']);
  });
});
