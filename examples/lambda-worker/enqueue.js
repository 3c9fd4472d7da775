// @ts-check
import { createProducer } from 'sqs-jobs';
import { makeThumbnail } from './jobs.js';

// What a service does after an upload: enqueue, and return at once. The queue comes from
// SQS_JOBS_QUEUE_URL (the stack's QueueUrl output), the job table from SQS_JOBS_JOB_TABLE.
const producer = createProducer();
const key = process.argv[2] ?? 'uploads/cat.jpg';
const { jobId } = await producer.enqueue(makeThumbnail, { key, width: 320 });
console.log(JSON.stringify({ jobId }));
producer.close();
