import { vi } from 'vitest';
import { ATTR_DLQ_AT, ATTR_DLQ_REASON, ATTR_DLQ_SOURCE } from '../../src/core/dead-letter.js';
import { ATTR_FIRST_SENT_AT } from '../../src/core/delivery.js';
import { ATTR_JOB, ATTR_JOB_ID } from '../../src/core/envelope.js';
import { SqsJobsError } from '../../src/core/errors.js';
import type { ArchivePage, ArchiveStore } from '../../src/ports/archive.js';
import { MemoryQueue } from '../../src/testing/memory-queue.js';

const text = (v: string) => ({ DataType: 'String', StringValue: v });
const DAY = 86_400_000;

/**
 * An archive in memory, listing in key order as S3 does, for the ops' unit tests: `failPut` makes
 * the puts of the keys it names reject (as S3 refusing a write would), `pageSize` makes pages short;
 * `puts` and `gets` count the calls.
 */
export class MemoryArchive implements ArchiveStore {
  readonly objects = new Map<string, string>();
  puts = 0;
  gets = 0;

  constructor(private readonly o: { failPut?: (key: string) => boolean; pageSize?: number } = {}) {}

  async check(): Promise<void> {}

  async put(key: string, body: string): Promise<void> {
    this.puts++;
    if (this.o.failPut?.(key)) throw new SqsJobsError('CONFIG_INVALID', `could not write s3://memory/${key}: access denied (AccessDenied)`);
    this.objects.set(key, body);
  }

  async list(prefix: string, o: { startAfter?: string; next?: string; max?: number } = {}): Promise<ArchivePage> {
    const after = o.next ?? o.startAfter ?? '';
    const keys = [...this.objects.keys()].filter((k) => k.startsWith(prefix) && k > after).sort();
    const page = keys.slice(0, Math.min(o.max ?? 1_000, this.o.pageSize ?? 1_000));
    return {
      objects: page.map((key) => ({ key, size: this.objects.get(key)!.length })),
      next: page.length < keys.length ? page.at(-1) : undefined,
    };
  }

  async get(key: string): Promise<string | undefined> {
    this.gets++;
    return this.objects.get(key);
  }

  /** The keys under `prefix`, sorted. */
  keys(prefix = ''): string[] {
    return [...this.objects.keys()].filter((k) => k.startsWith(prefix)).sort();
  }
}

/** A DLQ with dead letters sent to it `ageDays` ago (their SentTimestamp), as the worker writes them. */
export function dlqSetup() {
  const memory = new MemoryQueue();
  const dlq = memory.create('jobs-dlq');
  const source = memory.create('jobs', { deadLetterQueueUrl: dlq, maxReceiveCount: 3 });
  /** `firstSentDays`: the job's first send (sqsjobs-first-sent-at), earlier than its DLQ send; `pad`: that many bytes more in its args. */
  const deadLetter = async (id: string, ageDays: number, o: { job?: string; firstSentDays?: number; pad?: number } = {}) => {
    const { job = 'refund', firstSentDays } = o;
    const now = Date.now();
    vi.useFakeTimers({ toFake: ['Date'], now: now - ageDays * DAY });
    try {
      return (
        await memory.send(dlq, {
          body: JSON.stringify({ v: 1, id, job, args: o.pad ? { pad: 'x'.repeat(o.pad) } : {}, enqueuedAt: '2026-11-24T00:00:00.000Z' }),
          attributes: {
            [ATTR_JOB]: text(job),
            [ATTR_JOB_ID]: text(id),
            [ATTR_DLQ_REASON]: text('retries-exhausted'),
            [ATTR_DLQ_SOURCE]: text(source),
            [ATTR_DLQ_AT]: text(new Date(Date.now() - 1000).toISOString()),
            ...(firstSentDays === undefined
              ? {}
              : { [ATTR_FIRST_SENT_AT]: { DataType: 'Number', StringValue: String(now - firstSentDays * DAY) } }),
          },
        })
      ).messageId;
    } finally {
      vi.useRealTimers();
    }
  };
  const ids = (url: string) =>
    memory
      .peek(url)
      .map((m) => JSON.parse(m.body).id as string)
      .sort();
  return { memory, dlq, source, deadLetter, ids };
}
