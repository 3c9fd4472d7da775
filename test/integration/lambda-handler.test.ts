import { randomUUID } from 'node:crypto';
import { SendMessageBatchCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDynamoClient } from '../../src/adapters/aws-clients.js';
import { createJobTable } from '../../src/adapters/dynamodb-table.js';
import { defineBatchJob } from '../../src/core/batch-job.js';
import { ATTR_DLQ_REASON } from '../../src/core/dead-letter.js';
import { ATTR_PRIOR_RECEIVES, ATTR_RATE_SLOT, ATTR_UNFINISHED_RUNS } from '../../src/core/delivery.js';
import { encodeEnvelope, envelopeAttributes } from '../../src/core/envelope.js';
import { RetryLaterError, UnrecoverableError } from '../../src/core/errors.js';
import { sleep as wait } from '../../src/core/sleep.js';
import { defineJob } from '../../src/core/job.js';
import { createLambdaHandler } from '../../src/lambda/handler.js';
import type { LambdaHandlerOptions } from '../../src/lambda/options.js';
import { createPauses } from '../../src/ops/wiring.js';
import { createProducer } from '../../src/producer/producer.js';
import { getJob } from '../../src/status/get-job.js';
import { fanOutResultSchema } from '../../src/fan-out/completion.js';
import { EmulatedMapping } from '../helpers/lambda-mapping.js';
import {
  LOCAL_DYNAMODB,
  LOCAL_ENDPOINT,
  LOCAL_ENV,
  LOCAL_MEMCACHED,
  drain,
  eventually,
  freshQueues,
  queueCounts,
  quietLogger,
  sleep,
  sqsClient,
} from '../helpers/stack.js';

/**
 * createLambdaHandler on the emulated SQS event source mapping (test/helpers/lambda-mapping.ts):
 * real queues on LocalStack, the job store and the DynamoDB lock on DynamoDB Local, the records
 * walking the worker's own rules. What the mapping deletes, what comes back and what lands in the
 * DLQ are read from the queues themselves.
 */
const sqs = sqsClient();
const dynamo = createDynamoClient({ endpoint: LOCAL_DYNAMODB, region: 'us-east-1' }, {}, {});
const table = `lambda-${randomUUID().slice(0, 8)}`;
const store = { table, endpoint: LOCAL_DYNAMODB };
beforeAll(async () => {
  expect(await createJobTable(dynamo, table)).toBe('created');
});
afterAll(() => {
  sqs.destroy();
  dynamo.destroy();
});

const args = z.object({ n: z.number().int() });

/** A handler on LocalStack, quiet, metrics off unless asked. */
function handlerFor(queueUrl: string, options: Omit<LambdaHandlerOptions, 'queues'>) {
  return createLambdaHandler(
    { queues: [queueUrl], endpoint: LOCAL_ENDPOINT, region: 'us-east-1', logger: quietLogger, metrics: { sink: 'off' }, ...options },
    {},
  );
}

async function enqueue(
  queueUrl: string,
  job: Parameters<ReturnType<typeof createProducer>['enqueue']>[0],
  given: unknown[],
  jobId?: string,
) {
  const producer = createProducer({ queueUrl }, LOCAL_ENV);
  const ids: string[] = [];
  for (const a of given) ids.push((await producer.enqueue(job, a as never, jobId === undefined ? {} : { jobId })).jobId);
  producer.close();
  return ids;
}

const failedIds = (round: Awaited<ReturnType<EmulatedMapping['deliver']>>) =>
  'answered' in round!.outcome ? (round!.outcome.answered?.batchItemFailures ?? []).map((f) => f.itemIdentifier) : ['threw'];

describe('createLambdaHandler on the event source mapping', () => {
  it('runs each record once and reports none failed; the mapping deletes them all', async () => {
    const { queueUrl } = await freshQueues(sqs, 'lambda-ok');
    const runs: number[] = [];
    const job = defineJob({ name: 'ok', args, handle: ({ n }) => void runs.push(n) });
    await enqueue(queueUrl, job, [{ n: 1 }, { n: 2 }, { n: 3 }]);
    const round = await new EmulatedMapping(sqs, queueUrl).deliver(handlerFor(queueUrl, { jobs: [job] }));
    expect(failedIds(round)).toEqual([]);
    expect(round!.deleted).toHaveLength(3);
    expect(runs.sort()).toEqual([1, 2, 3]);
    expect(await queueCounts(sqs, queueUrl)).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
  });

  it('a handler that throws: its record reported failed, hidden for its backoff, and run again on its next receive', async () => {
    const { queueUrl } = await freshQueues(sqs, 'lambda-retry', { visibilityTimeout: 30 });
    let calls = 0;
    const job = defineJob({
      name: 'flaky',
      args,
      track: true,
      backoff: { baseMs: 2_000, capMs: 2_000, jitter: 0 },
      handle: (_a, ctx) => {
        calls++;
        if (ctx.attempt === 1) throw new Error('first time fails');
      },
    });
    const [jobId] = await enqueue(queueUrl, job, [{ n: 1 }]);
    const handler = handlerFor(queueUrl, { jobs: [job], store });
    const mapping = new EmulatedMapping(sqs, queueUrl);
    const first = await mapping.deliver(handler);
    expect(failedIds(first)).toEqual([first!.event.Records[0]!.messageId]);
    expect(await getJob(jobId!, store, {})).toMatchObject({ state: 'retrying', attempt: 1 });
    // Its backoff (2 s), not the queue's 30 s visibility timeout.
    const sentBack = Date.now();
    let second: Awaited<ReturnType<EmulatedMapping['deliver']>>;
    do second = await mapping.deliver(handler, 5);
    while (second === undefined && Date.now() - sentBack < 10_000);
    expect(Date.now() - sentBack).toBeLessThan(10_000);
    expect(second!.event.Records[0]!.attributes.ApproximateReceiveCount).toBe('2');
    expect(failedIds(second)).toEqual([]);
    expect(calls).toBe(2);
    expect(await getJob(jobId!, store, {})).toMatchObject({ state: 'completed', attempt: 2 });
  });

  it('poison and an unrecoverable error go to the DLQ with their reasons, reported done, so Lambda does not retry them', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'lambda-poison');
    const job = defineJob({
      name: 'strict',
      args,
      handle: ({ n }) => {
        if (n === 2) throw new UnrecoverableError('never works');
      },
    });
    await enqueue(queueUrl, job, [{ n: 1 }, { n: 2 }]);
    await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'not json' }));
    const round = await new EmulatedMapping(sqs, queueUrl).deliver(handlerFor(queueUrl, { jobs: [job] }));
    expect(failedIds(round)).toEqual([]);
    const dead = await drain(sqs, dlqUrl);
    expect(dead.map((m) => m.MessageAttributes?.[ATTR_DLQ_REASON]?.StringValue).sort()).toEqual(['invalid-json', 'unrecoverable']);
    expect(await queueCounts(sqs, queueUrl)).toEqual({ visible: 0, inFlight: 0, delayed: 0 });
  });

  it('on its last receive a failing job goes to the DLQ as retries-exhausted, before SQS’s redrive can take it without a reason', async () => {
    const { queueUrl, dlqUrl } = await freshQueues(sqs, 'lambda-exhausted', { maxReceiveCount: 2 });
    const job = defineJob({
      name: 'broken',
      args,
      backoff: { baseMs: 1_000, capMs: 1_000, jitter: 0 },
      handle: () => {
        throw new Error('always');
      },
    });
    await enqueue(queueUrl, job, [{ n: 1 }]);
    const handler = handlerFor(queueUrl, { jobs: [job] });
    const mapping = new EmulatedMapping(sqs, queueUrl);
    expect(failedIds(await mapping.deliver(handler))).toHaveLength(1);
    const last = await mapping.deliver(handler, 5);
    expect(last!.event.Records[0]!.attributes.ApproximateReceiveCount).toBe('2');
    expect(failedIds(last)).toEqual([]);
    const [dead] = await drain(sqs, dlqUrl);
    expect(dead!.MessageAttributes?.[ATTR_DLQ_REASON]?.StringValue).toBe('retries-exhausted');
  });

  it('RetryLaterError sets the record’s visibility to its delay', async () => {
    const { queueUrl } = await freshQueues(sqs, 'lambda-later', { visibilityTimeout: 30 });
    let calls = 0;
    const job = defineJob({
      name: 'later',
      args,
      handle: () => {
        if (++calls === 1) throw new RetryLaterError(1_000, 'not yet');
      },
    });
    await enqueue(queueUrl, job, [{ n: 1 }]);
    const handler = handlerFor(queueUrl, { jobs: [job] });
    const mapping = new EmulatedMapping(sqs, queueUrl);
    expect(failedIds(await mapping.deliver(handler))).toHaveLength(1);
    const at = Date.now();
    const again = await mapping.deliver(handler, 8);
    expect(Date.now() - at).toBeLessThan(8_000);
    expect(failedIds(again)).toEqual([]);
  });

  it('two invocations given one job id at once run it once (the lock on the job store’s table, by default without memcached)', async () => {
    const { queueUrl } = await freshQueues(sqs, 'lambda-race');
    let runs = 0;
    const job = defineJob({
      name: 'once',
      args,
      handle: async () => {
        runs++;
        await sleep(500);
      },
    });
    const jobId = `once-${randomUUID().slice(0, 8)}`;
    const envelope = { v: 1 as const, id: jobId, job: 'once', args: { n: 1 }, enqueuedAt: new Date().toISOString() };
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: [0, 1].map((i) => ({
          Id: `c${i}`,
          MessageBody: encodeEnvelope(envelope),
          MessageAttributes: envelopeAttributes(envelope),
        })),
      }),
    );
    // Two containers, each with its own lock: without memcached, on the job store's table (DynamoLock) by default.
    const containers = [0, 1].map(() => handlerFor(queueUrl, { jobs: [job], store }));
    const rounds = await Promise.all(containers.map((h) => new EmulatedMapping(sqs, queueUrl, { batchSize: 1 }).deliver(h)));
    expect(rounds.every((r) => r !== undefined)).toBe(true);
    expect(runs).toBe(1);
    // The copy that found the job running elsewhere is a duplicate: deleted, not retried.
    expect(rounds.flatMap(failedIds)).toEqual([]);
  });
});

describe('createLambdaHandler: fan-out', () => {
  it('a tracked fan-out over two containers counts every child once and sends its completion exactly once', async () => {
    const { queueUrl } = await freshQueues(sqs, 'lambda-fanout');
    const completions: unknown[] = [];
    const done = defineJob({ name: 'rows-done', args: fanOutResultSchema, handle: (a) => void completions.push(a) });
    const childRuns = new Map<number, number>();
    const child = defineJob({ name: 'row', args, handle: ({ n }) => void childRuns.set(n, (childRuns.get(n) ?? 0) + 1) });
    const parent = defineJob({
      name: 'rows',
      args: z.object({ rows: z.number() }),
      handle: ({ rows }, ctx) =>
        ctx.fanOut(
          child,
          Array.from({ length: rows }, (_, n) => ({ n })),
          { onComplete: { job: done, args: {} }, chunkSize: 10 },
        ),
    });
    const producer = createProducer({ queueUrl, store }, LOCAL_ENV);
    const { jobId } = await producer.enqueue(parent, { rows: 30 }, { track: true });
    producer.close();
    const options = { jobs: [parent, child, done], store };
    const containers = [handlerFor(queueUrl, options), handlerFor(queueUrl, options)];
    // Two mappings take turns until the queue is empty: the fan-out's chunks, its children, its completion.
    const mappings = containers.map(() => new EmulatedMapping(sqs, queueUrl, { batchSize: 10 }));
    let idle = 0;
    while (idle < 2) {
      const rounds = await Promise.all(mappings.map((m, i) => m.deliver(containers[i]!, 1)));
      idle = rounds.every((r) => r === undefined) ? idle + 1 : 0;
      for (const r of rounds) if (r !== undefined) expect(failedIds(r)).toEqual([]);
    }
    expect(completions).toHaveLength(1);
    expect(completions[0]).toMatchObject({ total: 30, succeeded: 30, failed: 0 });
    expect([...childRuns.values()].every((runs) => runs === 1) && childRuns.size === 30).toBe(true);
    expect(await getJob(jobId, store, {})).toMatchObject({ state: 'completed' });
    await Promise.all(containers.map((c) => c.close()));
  });
});

describe('createLambdaHandler: FIFO, batch jobs, the deadline', () => {
  it('FIFO: the records of a group after a failed one are reported failed and not run; other groups go on', async () => {
    const { queueUrl } = await freshQueues(sqs, 'lambda-fifo', { name: 'x.fifo' });
    const ran: string[] = [];
    const job = defineJob({
      name: 'step',
      args: z.object({ g: z.string(), n: z.number() }),
      handle: ({ g, n }) => {
        ran.push(`${g}${n}`);
        if (g === 'a' && n === 2) throw new Error('a2 fails');
      },
    });
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    for (const [g, n] of [
      ['a', 1],
      ['b', 1],
      ['a', 2],
      ['b', 2],
      ['a', 3],
    ] as const)
      await producer.enqueue(job, { g, n }, { groupId: g });
    producer.close();
    const round = await new EmulatedMapping(sqs, queueUrl).deliver(handlerFor(queueUrl, { jobs: [job] }));
    const ids = new Map(round!.event.Records.map((r) => [JSON.parse(r.body).args.g + JSON.parse(r.body).args.n, r.messageId]));
    expect(ran.sort()).toEqual(['a1', 'a2', 'b1', 'b2']);
    expect(failedIds(round).sort()).toEqual([ids.get('a2'), ids.get('a3')].sort());
  });

  it('batch jobs run their batches within the invocation; an item the handler reports failed is the one record reported failed', async () => {
    const { queueUrl } = await freshQueues(sqs, 'lambda-batch');
    const sizes: number[] = [];
    const job = defineBatchJob({
      name: 'index',
      args,
      maxSize: 25,
      minSize: 20, // more than the event brings: the invocation flushes what it holds anyway
      maxWaitMs: 60_000,
      handle: (items) => {
        sizes.push(items.length);
        const bad = items.find((i) => i.args.n === 3);
        return { failed: bad === undefined ? [] : [{ jobId: bad.jobId, error: new Error('item 3 fails') }] };
      },
    });
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    await producer.enqueueMany(
      job,
      Array.from({ length: 12 }, (_, n) => ({ n })),
    );
    producer.close();
    const round = await new EmulatedMapping(sqs, queueUrl, { batchSize: 12, windowSeconds: 1 }).deliver(
      handlerFor(queueUrl, { jobs: [job] }),
    );
    expect(round!.event.Records).toHaveLength(12);
    expect(sizes).toEqual([12]);
    const three = round!.event.Records.find((r) => JSON.parse(r.body).args.n === 3)!;
    expect(failedIds(round)).toEqual([three.messageId]);
  });

  it('at the deadline a running job is stopped and, like the unstarted, re-sent uncounted: reported done, never failed', async () => {
    const { queueUrl } = await freshQueues(sqs, 'lambda-deadline');
    const ended: string[] = [];
    let started = 0;
    const job = defineJob({
      name: 'slow',
      args,
      handle: async (_a, ctx) => {
        // The first to start is quick; the next runs past the deadline; the third never starts (one at a time).
        await wait(started++ === 0 ? 200 : 10_000, ctx.signal);
        ended.push(ctx.signal.aborted ? (ctx.signal.reason as { code: string }).code : 'done');
      },
    });
    await enqueue(queueUrl, job, [{ n: 1 }, { n: 2 }, { n: 3 }]);
    const handler = handlerFor(queueUrl, { jobs: [job], concurrency: 1, deadlineMarginMs: 1_500, abortGraceMs: 500 });
    const round = await new EmulatedMapping(sqs, queueUrl, { functionTimeoutMs: 3_000 }).deliver(handler);
    expect(failedIds(round)).toEqual([]);
    expect(ended).toEqual(['done', 'DEADLINE']);
    // The two not done are back as copies: a fresh receive count, the same attempt, the cut-short run counted.
    const copies = await drain(sqs, queueUrl);
    expect(copies).toHaveLength(2);
    for (const c of copies) {
      expect(c.Attributes?.ApproximateReceiveCount).toBe('1');
      expect(c.MessageAttributes?.[ATTR_PRIOR_RECEIVES]?.StringValue).toBe('0');
    }
    expect(copies.map((c) => c.MessageAttributes?.[ATTR_UNFINISHED_RUNS]?.StringValue?.split(' ')[0]).sort()).toEqual(['1', undefined]);
  });
});

describe('createLambdaHandler: what an invocation cannot wait for', () => {
  it('a job over its tenant’s cap or its rate limit is re-sent to come back at its turn, uncounted, and reported done', async () => {
    const { queueUrl } = await freshQueues(sqs, 'lambda-turns');
    const lockKeyPrefix = `lambda-${randomUUID().slice(0, 8)}:`; // permits and rate slots of this run alone
    const ran: string[] = [];
    const capped = defineJob({
      name: 'capped',
      args,
      handle: async ({ n }) => {
        ran.push(`capped${n}`);
        await sleep(300);
      },
    });
    const limited = defineJob({ name: 'limited', args, rateLimit: { perSecond: 1 }, handle: ({ n }) => void ran.push(`limited${n}`) });
    const producer = createProducer({ queueUrl }, LOCAL_ENV);
    await producer.enqueueMany(capped, [{ n: 1 }, { n: 2 }], { tenant: 'acme' });
    await producer.enqueueMany(limited, [{ n: 1 }, { n: 2 }]);
    producer.close();
    const handler = handlerFor(queueUrl, { jobs: [capped, limited], memcached: LOCAL_MEMCACHED, lockKeyPrefix, tenantCaps: { acme: 1 } });
    const round = await new EmulatedMapping(sqs, queueUrl).deliver(handler);
    expect(round!.event.Records).toHaveLength(4);
    expect(failedIds(round)).toEqual([]);
    // One capped job ran; the other would have waited for the permit. A rate's first start is at
    // the next slot (its window's start, up to 1 s ahead): both limited jobs would have waited for theirs.
    expect(ran).toHaveLength(1);
    expect(ran[0]).toMatch(/^capped/);
    // Back as delayed copies (SQS delays are whole seconds), a fresh receive count, their attempt kept;
    // a limited job's copy carries the slot it reserved, to start on when it comes back.
    expect(await queueCounts(sqs, queueUrl)).toMatchObject({ visible: 0, inFlight: 0, delayed: 3 });
    await eventually(async () => (await queueCounts(sqs, queueUrl)).visible === 3, 'the copies visible', 20_000);
    const copies = await drain(sqs, queueUrl);
    expect(copies).toHaveLength(3);
    expect(copies.filter((c) => c.MessageAttributes?.[ATTR_RATE_SLOT] !== undefined)).toHaveLength(2);
    for (const c of copies) {
      expect(c.Attributes?.ApproximateReceiveCount).toBe('1');
      expect(c.MessageAttributes?.[ATTR_PRIOR_RECEIVES]?.StringValue).toBe('0');
    }
  });
});

describe('createLambdaHandler: pauses', () => {
  it('a paused job type is re-sent for the pause’s delay; a paused FIFO queue’s records go back by visibility at once, not held to the deadline', async () => {
    const standard = await freshQueues(sqs, 'lambda-paused');
    const fifo = await freshQueues(sqs, 'lambda-paused', { name: 'x.fifo' });
    const ran: number[] = [];
    const job = defineJob({ name: 'report', args, handle: ({ n }) => void ran.push(n) });
    const pauses = createPauses({ store }, LOCAL_ENV);
    await pauses.pause({ job: 'report' }, { by: 'test', reason: 'upstream down' });
    const fifoName = fifo.queueUrl.split('/').pop()!;
    await pauses.pause({ queue: fifoName }, { by: 'test' });
    try {
      const producer = createProducer({ queueUrl: standard.queueUrl }, LOCAL_ENV);
      await producer.enqueue(job, { n: 1 });
      producer.close();
      const fifoProducer = createProducer({ queueUrl: fifo.queueUrl }, LOCAL_ENV);
      await fifoProducer.enqueue(job, { n: 2 }, { groupId: 'g' });
      fifoProducer.close();
      const options = { jobs: [job], store, pausedDelaySeconds: 10 };
      const paused = await new EmulatedMapping(sqs, standard.queueUrl).deliver(handlerFor(standard.queueUrl, options));
      expect(failedIds(paused)).toEqual([]); // re-sent (a delayed copy), this receive not counted
      expect(await queueCounts(sqs, standard.queueUrl)).toMatchObject({ delayed: 1, inFlight: 0 });
      const at = Date.now();
      const fifoRound = await new EmulatedMapping(sqs, fifo.queueUrl, { functionTimeoutMs: 20_000 }).deliver(
        handlerFor(fifo.queueUrl, options),
      );
      expect(Date.now() - at).toBeLessThan(5_000); // answered at once, not at the 20 s deadline
      expect(failedIds(fifoRound)).toHaveLength(1); // its group's order kept: back by visibility
      expect(ran).toEqual([]);
    } finally {
      await pauses.resume({ job: 'report' });
      await pauses.resume({ queue: fifoName });
      pauses.close();
    }
  });
});

describe('createLambdaHandler: what it refuses', () => {
  it('options that mean nothing on Lambda, and caps or rate limits without memcached, with the reason', () => {
    const job = defineJob({ name: 'j', args, handle: () => {} });
    const queueUrl = `${LOCAL_ENDPOINT}/000000000000/q`;
    expect(() => handlerFor(queueUrl, { jobs: [job], prefetch: 5 } as never)).toThrow(/options\.prefetch: not on Lambda/);
    expect(() => handlerFor(queueUrl, { jobs: [job], tenantCaps: { acme: 2 } })).toThrow(/tenantCaps: on Lambda this needs memcached/);
    const limited = defineJob({ name: 'limited', args, rateLimit: { perSecond: 5 }, handle: () => {} });
    expect(() => handlerFor(queueUrl, { jobs: [limited] })).toThrow(/limited have a rateLimit: on Lambda this needs memcached/);
    expect(() => handlerFor(queueUrl, { jobs: [job], deadlineMarginMs: 500 })).toThrow(/deadlineMarginMs: .* above abortGraceMs/);
  });
});
