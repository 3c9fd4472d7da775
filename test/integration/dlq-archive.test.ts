import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { CreateBucketCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { ChangeMessageVisibilityBatchCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createS3Client, S3Archive } from '../../src/adapters/s3-archive.js';
import { SqsQueuePort } from '../../src/adapters/sqs-queue.js';
import { run } from '../../src/cli/program.js';
import { ATTR_DLQ_REASON } from '../../src/core/dead-letter.js';
import { defineJob } from '../../src/core/job.js';
import { fromRecord, letterKey } from '../../src/ops/archive-format.js';
import { replayArchived } from '../../src/ops/archive-replay.js';
import { archiveDeadLetters } from '../../src/ops/dlq-archive.js';
import { replayDeadLetters } from '../../src/ops/replay.js';
import { deadLetters, killOnDelete } from '../helpers/dlq-archive.js';
import { LOCAL_ENDPOINT, LOCAL_ENV, drain, eventually, freshQueues, queueCounts, sqsClient } from '../helpers/stack.js';
import { recordEvents, useWorkers } from '../helpers/worker.js';

/*
 * `sqs-jobs dlq archive` and `dlq replay --from` on S3 and SQS themselves (LocalStack's and moto's):
 * nothing leaves the DLQ that S3 does not hold; the DLQ's retention is checked; a process killed
 * between its S3 write and its DLQ delete leaves the dead letter in both, and replaying both runs
 * the job once; messages of 200 KB replay in batches under SQS's 1 MiB. The rules in memory:
 * test/unit/ops/dlq-archive.test.ts and archive-replay.test.ts.
 */

const sqs = sqsClient();
const s3 = createS3Client({ endpoint: LOCAL_ENDPOINT, region: 'us-east-1' }, {}, {});
const queue = new SqsQueuePort(sqs);
const bucket = `sqs-jobs-archive-${randomUUID().slice(0, 8)}`;
const start = useWorkers();
const CLI_ENV = { ...process.env, ...LOCAL_ENV };

/** The CLI in this process: what it printed, and its exit code. */
async function cli(args: string[]) {
  let out = '';
  let err = '';
  const code = await run(args, { out: (t) => (out += t), err: (t) => (err += t), env: CLI_ENV, signal: new AbortController().signal });
  return { code, out, err };
}

beforeAll(async () => {
  await s3.send(new CreateBucketCommand({ Bucket: bucket }));
});
afterAll(() => {
  sqs.destroy();
  s3.destroy();
});

async function keysUnder(prefix: string): Promise<string[]> {
  const out = await s3.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
  return (out.Contents ?? []).map((c) => c.Key!).sort();
}

const jobIdsIn = async (url: string) => (await drain(sqs, url, 2)).map((m) => JSON.parse(m.Body!).id as string).sort();

describe('dlq archive', () => {
  it('writes each dead letter sent to the DLQ before --older-than to S3 (SSE-KMS with --kms-key), deletes only those, leaves the rest visible', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'archive');
    const ids = await deadLetters(queue, queueUrl, dlqUrl, 'charge', ['old-1', 'old-2', 'old-3']);
    const sentOld = Date.now();
    const key = randomUUID();
    const prefix = `kms-${key.slice(0, 8)}/`; // its own, so that a retried test meets none of its first try's objects
    const missing = `s3://no-such-${bucket}/x`;

    // Refused before any message is touched: an age the DLQ does not keep (14 days), a missing bucket on a dry run.
    expect(await cli(['dlq', 'archive', '--dlq', dlqUrl, '--older-than', '14d', '--to', `s3://${bucket}/p`])).toMatchObject({
      code: 1,
      err: expect.stringContaining(
        "CONFIG_INVALID: --older-than 14d (1209600 s) is not below the DLQ's MessageRetentionPeriod of 14d (1209600 s",
      ),
    });
    const dry = await cli(['dlq', 'archive', '--dlq', dlqUrl, '--older-than', '1', '--to', missing, '--dry-run']);
    expect(dry).toMatchObject({
      code: 1,
      err: expect.stringContaining(`CONFIG_INVALID: could not reach s3://no-such-${bucket}/: no bucket named`),
    });
    const fromMissing = await cli(['dlq', 'replay', '--from', missing]);
    expect(fromMissing.err).toMatch(
      new RegExp(`^sqs-jobs: CONFIG_INVALID: could not list s3://no-such-${bucket}/x/dead-letters/: no bucket named .*\\n$`),
    );

    // S3 refuses every write (no such bucket): nothing leaves the DLQ, all of it visible again.
    await sleep(sentOld + 1_100 - Date.now());
    const refused = await cli(['dlq', 'archive', '--dlq', dlqUrl, '--older-than', '1', '--to', missing]);
    expect(refused.code).toBe(1);
    expect(refused.out).toMatch(
      /stopped: every write of a batch failed \(not archived, left in the DLQ: could not write .* no bucket named .*NoSuchBucket/,
    );
    expect(await queueCounts(sqs, dlqUrl)).toMatchObject({ visible: 3, inFlight: 0 });

    // Sent to the DLQ just now, whatever their job's first send (three days ago for young-1): not old enough.
    await deadLetters(queue, queueUrl, dlqUrl, 'charge', ['young-1'], { firstSentDaysAgo: 3 });
    await deadLetters(queue, queueUrl, dlqUrl, 'charge', ['young-2']);
    const { out } = await cli([
      'dlq',
      'archive',
      '--dlq',
      dlqUrl,
      '--older-than',
      '1',
      '--to',
      `s3://${bucket}/${prefix}`,
      '--kms-key',
      key,
    ]);
    expect(out.match(/^archived charge old-\d → s3:\/\//gm)).toHaveLength(3);
    expect(out).toMatch(/^archived 3 message\(s\) to s3:\/\/\S+\/kms-\w+\/ \(write, then delete\)$/m);
    expect(out).toMatch(/^left in the DLQ: 2 not old enough$/m);
    expect(out).toMatch(
      /^margin 13d23h59m59s: the DLQ keeps a message 14d \(MessageRetentionPeriod\), --older-than 1s; run this at least every 13d23h59m59s$/m,
    );

    // What left the DLQ is exactly what S3 holds; what stayed is visible at once.
    expect(await queueCounts(sqs, dlqUrl)).toMatchObject({ visible: 2, inFlight: 0 });
    expect(await jobIdsIn(dlqUrl)).toEqual(['young-1', 'young-2']);
    const old = ['old-1', 'old-2', 'old-3'];
    expect(await keysUnder(prefix)).toEqual(old.map((id) => letterKey(prefix, ids.get(id)!)).sort());
    for (const id of old) {
      const Key = letterKey(prefix, ids.get(id)!);
      const { m, record, letter } = fromRecord(
        await (await s3.send(new GetObjectCommand({ Bucket: bucket, Key }))).Body!.transformToString(),
      );
      expect(letter).toMatchObject({
        jobName: 'charge',
        jobId: id,
        reason: 'retries-exhausted',
        error: `${id} failed`,
        sourceQueueUrl: queueUrl,
      });
      expect(m.attributes[ATTR_DLQ_REASON]?.StringValue).toBe('retries-exhausted');
      expect(JSON.parse(m.body)).toMatchObject({ id, job: 'charge' });
      expect(record).toMatchObject({ dlqUrl, messageId: ids.get(id) });
      const head = await s3.send(new HeadObjectCommand({ Bucket: bucket, Key }));
      expect(head).toMatchObject({ ServerSideEncryption: 'aws:kms', BucketKeyEnabled: true });
      expect(head.SSEKMSKeyId).toContain(key); // LocalStack answers it as an ARN, moto as given
    }
  });
});

describe('a crash between the S3 write and the DLQ delete', () => {
  it('leaves each dead letter in both; replayed from the DLQ (--archive marks one) and from S3, each job runs once', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'archive-crash', { maxReceiveCount: 3 });
    const runs = new Map<string, number>();
    const job = defineJob({
      name: 'refund',
      args: z.object({}),
      handle: (_a, ctx) => void runs.set(ctx.jobId, (runs.get(ctx.jobId) ?? 0) + 1),
    });
    const ids = await deadLetters(queue, queueUrl, dlqUrl, 'refund', ['c-1', 'c-2', 'c-3', 'c-4']);
    const prefix = `crash-${randomUUID().slice(0, 8)}/`;
    const archiveUrl = `s3://${bucket}/${prefix}`;

    let child: ChildProcess | undefined;
    const proxy = await killOnDelete(() => child);
    try {
      const args = ['dlq', 'archive', '--dlq', dlqUrl, '--older-than', '0', '--to', archiveUrl, '--endpoint', proxy.url];
      // `node --import tsx`, so that the SIGKILL reaches the process doing the work.
      child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], { env: CLI_ENV, stdio: 'ignore' });
      const exit = await new Promise<NodeJS.Signals | null>((r) => child!.once('exit', (_code, signal) => r(signal)));
      expect([exit, proxy.killed()]).toEqual(['SIGKILL', true]);
    } finally {
      await proxy.close();
    }
    // In S3, those of the first batch (all four, where the server hands them out in one receive);
    // in the DLQ, still all four (held by the dead process: let its holds end now).
    const inS3 = await keysUnder(prefix);
    expect(inS3.length).toBeGreaterThan(0);
    expect([...ids.values()].map((id) => letterKey(prefix, id))).toEqual(expect.arrayContaining(inS3));
    for (let i = 0; i < proxy.handles.length; i += 10)
      await sqs.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: dlqUrl,
          Entries: proxy.handles.slice(i, i + 10).map((h, n) => ({ Id: String(n), ReceiptHandle: h, VisibilityTimeout: 0 })),
        }),
      );
    expect(await queueCounts(sqs, dlqUrl)).toMatchObject({ visible: 4, inFlight: 0 });

    const worker = start({ queues: [queueUrl], jobs: [job] });
    const events = recordEvents(worker);
    await worker.start();
    // One of those in both replayed from the DLQ with --archive: its record is marked, and the replay from S3 leaves it.
    const marked = [...ids].find(([, messageId]) => inS3.includes(letterKey(prefix, messageId)))![0];
    const one = await cli(['dlq', 'replay', '--dlq', dlqUrl, '--archive', archiveUrl, '--id', marked]);
    expect(one.out).toMatch(new RegExp(`^marked 1 as replayed in ${archiveUrl} `, 'm'));
    expect((await replayDeadLetters(queue, { dlqUrl, sourceQueueUrl: undefined })).moved).toBe(3);
    const { out } = await cli(['dlq', 'replay', '--from', archiveUrl]);
    expect(out.match(/^moved refund c-\d → /gm)).toHaveLength(inS3.length - 1);
    expect(out).toMatch(/^not sent: 1 replayed before$/m);
    // The rest, sent from both, run once by their job id (the worker's dedupe lock).
    await eventually(
      () => events.count('job:succeeded') === 4 && events.count('job:duplicate') === inS3.length - 1,
      'four runs, and a duplicate of each job replayed from both',
    );
    await eventually(async () => {
      const c = await queueCounts(sqs, queueUrl);
      return c.visible + c.inFlight === 0;
    }, 'the queue to empty');
    expect(Object.fromEntries(runs)).toEqual({ 'c-1': 1, 'c-2': 1, 'c-3': 1, 'c-4': 1 });

    // Replayed from S3 again: each is marked as replayed, nothing is sent.
    const again = await replayArchived(queue, new S3Archive(s3, { bucket }), { prefix, sourceQueueUrl: undefined });
    expect(again).toMatchObject({ moved: 0, passedOver: { replayedBefore: inS3.length } });
    await worker.stop();
    expect(events.count('job:start')).toBe(4);
    expect(await queueCounts(sqs, dlqUrl)).toMatchObject({ visible: 0, inFlight: 0 });
  });
});

describe('dead letters of 200 KB', () => {
  it('replay from the DLQ and from S3 in batches under SQS 1 MiB', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'archive-large');
    const jobIds = Array.from({ length: 12 }, (_, n) => `big-${n}`);
    await deadLetters(queue, queueUrl, dlqUrl, 'resize', jobIds, { pad: 200_000 });
    const store = new S3Archive(s3, { bucket });
    const prefix = `large-${randomUUID().slice(0, 8)}/`;
    expect(await archiveDeadLetters(queue, store, { dlqUrl, prefix, olderThanSeconds: 0, limit: 6 })).toMatchObject({ archived: 6 });
    expect(await replayDeadLetters(queue, { dlqUrl, sourceQueueUrl: undefined })).toMatchObject({ moved: 6, skipped: [] });
    expect(await replayArchived(queue, store, { prefix, sourceQueueUrl: undefined })).toMatchObject({ moved: 6, skipped: [] });
    const back = await drain(sqs, queueUrl);
    expect(back.map((m) => JSON.parse(m.Body!).id).sort()).toEqual([...jobIds].sort());
    expect(back.every((m) => JSON.parse(m.Body!).args.pad.length === 200_000)).toBe(true);
  });
});
