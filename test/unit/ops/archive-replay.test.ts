import { describe, expect, it } from 'vitest';
import { ATTR_DLQ_SOURCE, ATTR_REPLAY } from '../../../src/core/dead-letter.js';
import { ATTR_JOB, ATTR_JOB_ID } from '../../../src/core/envelope.js';
import { SQS_MAX_MESSAGE_BYTES } from '../../../src/core/sqs-limits.js';
import { messageSize } from '../../../src/core/sqs-text.js';
import { fromRecord, letterKey, replayedKey, toRecord } from '../../../src/ops/archive-format.js';
import { listArchived, MAX_RECORD_BYTES } from '../../../src/ops/archive-list.js';
import { replayArchived } from '../../../src/ops/archive-replay.js';
import { replayDeadLetters } from '../../../src/ops/replay.js';
import type { QueuePort } from '../../../src/ports/queue.js';
import { dlqSetup, MemoryArchive } from '../../helpers/memory-archive.js';

/*
 * The replays of archived dead letters on the in-memory queue and archive: `dlq replay --from`
 * (replayArchived), listArchived, `dlq replay --archive` (replayDeadLetters marking the archive),
 * and the send both share, split by SQS's 1 MiB a batch.
 */

const PREFIX = 'dlq/';

/** An archive of `count` records written as archiveDeadLetters writes them (without a sweep of the DLQ: no second's wait for its end). */
async function archived(count: number, o: { pageSize?: number; pad?: number } = {}) {
  const s = dlqSetup();
  const store = new MemoryArchive(o.pageSize === undefined ? {} : { pageSize: o.pageSize });
  for (let n = 0; n < count; n++)
    await s.deadLetter(`a-${String(n).padStart(2, '0')}`, 5, { job: n % 2 === 0 ? 'refund' : 'email', pad: o.pad });
  for (let got = await s.memory.receive(s.dlq, 10, 0, 30); got.length > 0; got = await s.memory.receive(s.dlq, 10, 0, 30))
    for (const m of got) await store.put(letterKey(PREFIX, m.messageId), JSON.stringify(toRecord(m)));
  expect(store.keys()).toHaveLength(count);
  return { ...s, store };
}

describe('replayArchived and listArchived', () => {
  it('sends each record back once, marked with the replay and in the archive; a second replay sends none and reads none', async () => {
    const { memory, source, store, ids } = await archived(23, { pageSize: 4 });
    const moved: string[] = [];
    const first = await replayArchived(memory, store, { prefix: PREFIX, sourceQueueUrl: undefined, onMoved: (l) => moved.push(l.jobId!) });
    expect(first).toMatchObject({ matched: 23, moved: 23, skipped: [], complete: true });
    expect(moved).toHaveLength(23);
    expect(ids(source)).toHaveLength(23);
    expect(new Set(ids(source)).size).toBe(23);
    for (const m of memory.peek(source)) {
      expect(Object.keys(m.attributes).sort()).toEqual([ATTR_JOB_ID, ATTR_JOB, ATTR_REPLAY].sort());
      expect(m.attributes[ATTR_REPLAY]?.StringValue).toBe(first.replayId);
    }
    expect(store.keys(`${PREFIX}replayed/`)).toHaveLength(23);
    const gets = store.gets;
    const second = await replayArchived(memory, store, { prefix: PREFIX, sourceQueueUrl: undefined });
    expect(second).toMatchObject({ matched: 0, moved: 0, passedOver: { replayedBefore: 23 } });
    expect(store.gets).toBe(gets); // a marked record is not read
    expect(ids(source)).toHaveLength(23);
  });

  it('chooses by the filter and the limit; a dry run sends nothing; a record naming no source needs one; garbage is named', async () => {
    const { memory, source, store, ids } = await archived(6);
    await store.put(letterKey(PREFIX, 'zz-garbage'), '{"not":"a record"}');
    const dry = await replayArchived(memory, store, { prefix: PREFIX, sourceQueueUrl: undefined, filter: { job: 'email' }, dryRun: true });
    expect(dry).toMatchObject({ matched: 3, moved: 0 });
    expect(dry.skipped.filter((s) => s.why === 'dry run')).toHaveLength(3);
    expect(dry.skipped.at(-1)).toMatchObject({
      key: letterKey(PREFIX, 'zz-garbage'),
      why: expect.stringMatching(/^not a dead letter record/),
    });
    const one = await replayArchived(memory, store, { prefix: PREFIX, sourceQueueUrl: undefined, filter: { job: 'email' }, limit: 1 });
    expect(one).toMatchObject({ moved: 1, complete: false });
    expect(ids(source)).toHaveLength(1);
    expect(['a-01', 'a-03', 'a-05']).toContain(ids(source)[0]);

    const orphan = { ...JSON.parse(store.objects.get(letterKey(PREFIX, messageIdOf(store, 'a-00')))!) };
    delete orphan.attributes[ATTR_DLQ_SOURCE];
    store.objects.set(letterKey(PREFIX, 'orphan'), JSON.stringify({ ...orphan, messageId: 'orphan' }));
    const without = await replayArchived(memory, store, { prefix: PREFIX, sourceQueueUrl: undefined, filter: { id: 'a-00' } });
    expect(without.skipped.map((s) => s.why)).toContain('the message does not name its source queue: pass --queue');
  });

  it('listArchived pages in key order, says which were replayed, and takes the filter', async () => {
    const { memory, store } = await archived(7, { pageSize: 2 });
    await replayArchived(memory, store, { prefix: PREFIX, sourceQueueUrl: undefined, filter: { id: 'a-03' } });
    const page1 = await listArchived(store, PREFIX, { limit: 4 });
    const page2 = await listArchived(store, PREFIX, { limit: 4, after: page1.next });
    expect(page1.letters).toHaveLength(4);
    expect(page2).toMatchObject({ next: undefined });
    const all = [...page1.letters, ...page2.letters];
    expect(all.map((l) => l.letter.jobId).sort()).toEqual(['a-00', 'a-01', 'a-02', 'a-03', 'a-04', 'a-05', 'a-06']);
    expect(all.filter((l) => l.replayed).map((l) => l.letter.jobId)).toEqual(['a-03']);
    expect((await listArchived(store, PREFIX, { filter: { job: 'email' } })).letters).toHaveLength(3);
    expect(all.every((l) => l.key === letterKey(PREFIX, l.letter.messageId) && Date.parse(l.sentAt) > 0)).toBe(true);
  });

  it('listArchived reads no more than a page needs (its limit, or maxScan with a filter) and ends on the last record, not past it', async () => {
    const { store } = await archived(12, { pageSize: 1000 });
    let gets = store.gets;
    const first = await listArchived(store, PREFIX, { limit: 3 });
    expect(store.gets - gets).toBe(3);
    expect(first.next).toBeDefined();
    gets = store.gets;
    const filtered = await listArchived(store, PREFIX, { limit: 1, filter: { job: 'nothing-matches' }, maxScan: 5 });
    expect(store.gets - gets).toBe(5);
    expect(filtered).toMatchObject({ letters: [], scanned: 5 });
    // A limit that ends exactly on the last record: no next page to show nothing.
    const whole = await listArchived(store, PREFIX, { limit: 12 });
    expect(whole).toMatchObject({ next: undefined, scanned: 12 });
    expect(
      (await listArchived(store, PREFIX, { limit: 4, after: (await listArchived(store, PREFIX, { limit: 8 })).next })).next,
    ).toBeUndefined();
    // A record that is no dead letter's is left out and counted; one larger than any record is not read at all.
    await store.put(letterKey(PREFIX, 'zz-garbage'), '{"not":"a record"}');
    await store.put(letterKey(PREFIX, 'zz-huge'), 'x'.repeat(MAX_RECORD_BYTES + 1));
    gets = store.gets;
    expect(await listArchived(store, PREFIX, { limit: 50 })).toMatchObject({ scanned: 14, unreadable: 2, next: undefined });
    expect(store.gets - gets).toBe(13);
  });
});

describe('dlq replay --archive (replayDeadLetters with an archive)', () => {
  it('marks each message it moves that the archive holds, so a replay from the archive then sends none of them', async () => {
    const { memory, dlq, source, deadLetter, ids } = dlqSetup();
    for (const id of ['both-1', 'both-2', 'dlq-only']) await deadLetter(id, 5);
    // An archive run stopped between its writes and its deletes: two records, all three still in the DLQ.
    const store = new MemoryArchive();
    for (const m of await memory.receive(dlq, 10, 0, 0))
      if (JSON.parse(m.body).id !== 'dlq-only') await store.put(letterKey(PREFIX, m.messageId), JSON.stringify(toRecord(m)));
    const result = await replayDeadLetters(memory, { dlqUrl: dlq, sourceQueueUrl: undefined, archive: { store, prefix: PREFIX } });
    expect(result).toMatchObject({ moved: 3, marked: 2, skipped: [] });
    expect(store.keys(`${PREFIX}replayed/`)).toHaveLength(2);
    expect(JSON.parse(store.objects.get(store.keys(`${PREFIX}replayed/`)[0]!)!)).toMatchObject({ replayId: result.replayId, to: source });

    const fromArchive = await replayArchived(memory, store, { prefix: PREFIX, sourceQueueUrl: undefined });
    expect(fromArchive).toMatchObject({ moved: 0, passedOver: { replayedBefore: 2 } });
    expect(ids(source)).toEqual(['both-1', 'both-2', 'dlq-only']);
    expect(ids(dlq)).toEqual([]);
  });
});

describe("the replay's send", () => {
  it('splits a batch by SQS 1 MiB (body and attributes), from the archive and from the DLQ', async () => {
    const { memory, dlq, source, store, deadLetter, ids } = await archived(12, { pad: 200_000 });
    const batches: number[] = [];
    // As SQS answers a batch over 1 MiB: the whole call is refused.
    const strict: QueuePort = {
      receive: (...a) => memory.receive(...a),
      changeVisibilityBatch: (...a) => memory.changeVisibilityBatch(...a),
      deleteBatch: (...a) => memory.deleteBatch(...a),
      send: (...a) => memory.send(...a),
      maximumMessageBytes: (...a) => memory.maximumMessageBytes(...a),
      deadLetterTarget: (...a) => memory.deadLetterTarget(...a),
      sendBatch: async (url, entries) => {
        const bytes = entries.reduce((n, e) => n + messageSize(e.message.body, e.message.attributes), 0);
        if (bytes > SQS_MAX_MESSAGE_BYTES) throw Object.assign(new Error(`${bytes} bytes`), { name: 'BatchRequestTooLong' });
        batches.push(entries.length);
        return memory.sendBatch(url, entries);
      },
    };
    expect(await replayArchived(strict, store, { prefix: PREFIX, sourceQueueUrl: undefined })).toMatchObject({ moved: 12, skipped: [] });
    expect(Math.max(...batches)).toBe(5);
    for (let n = 0; n < 6; n++) await deadLetter(`d-${n}`, 1, { pad: 200_000 });
    expect(await replayDeadLetters(strict, { dlqUrl: dlq, sourceQueueUrl: undefined })).toMatchObject({ moved: 6, skipped: [] });
    expect(ids(source)).toHaveLength(18);
    expect(JSON.parse(memory.peek(source)[0]!.body).args.pad).toHaveLength(200_000);
  });
});

/** The DLQ message id of the record whose job id is `jobId`. */
function messageIdOf(store: MemoryArchive, jobId: string): string {
  for (const [key, body] of store.objects)
    if (!key.includes(replayedKey(PREFIX, '')) && fromRecord(body).letter.jobId === jobId) return fromRecord(body).m.messageId;
  throw new Error(`no record of ${jobId}`);
}
