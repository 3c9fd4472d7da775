// @ts-check
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createProducer, getJob } from 'sqs-jobs';
import { createLambdaHandler } from 'sqs-jobs/lambda';
import { MemoryJobStore, MemoryLock, MemoryQueue, deliverToLambda } from 'sqs-jobs/testing';
import { makeThumbnail } from './jobs.js';

// The handler under test without AWS: an in-memory queue and job store, and deliverToLambda in
// the event source mapping's place.
test('a thumbnail job runs to completed, and its record is not reported failed', async () => {
  const queue = new MemoryQueue();
  const dlq = queue.create('thumbnails-dlq');
  const queueUrl = queue.create('thumbnails', { deadLetterQueueUrl: dlq, maxReceiveCount: 5 });
  const store = new MemoryJobStore();
  const handler = createLambdaHandler({
    jobs: [makeThumbnail],
    queues: [queueUrl],
    queue,
    store,
    lock: new MemoryLock(),
    metrics: { sink: 'off' },
  });
  const producer = createProducer({ queueUrl, queue, store });
  const { jobId } = await producer.enqueue(makeThumbnail, { key: 'uploads/cat.jpg', width: 320 });
  const { records, failed } = await deliverToLambda(handler, queue, queueUrl);
  assert.equal(records.length, 1);
  assert.deepEqual(failed, []);
  const status = await getJob(jobId, store);
  assert.equal(status?.state, 'completed');
  await handler.close();
});
