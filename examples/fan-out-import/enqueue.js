// @ts-check
import { createProducer } from 'sqs-jobs';
import { importFile } from './jobs.js';

// The queue: SQS_JOBS_QUEUE_URL; the job table: SQS_JOBS_JOB_TABLE.
const producer = createProducer();
const { jobId } = await producer.enqueue(importFile, { file: process.argv[2] ?? 'users.csv' });
console.log(JSON.stringify({ jobId }));
producer.close();
