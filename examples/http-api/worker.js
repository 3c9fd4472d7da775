// @ts-check
import { createWorker } from 'sqs-jobs';
import { jobs } from './jobs.js';

// The queue (SQS_JOBS_QUEUE_URL) and its -high and -low lanes; stops on SIGTERM or Ctrl-C.
const worker = createWorker({ jobs, tiers: true, concurrency: 4 });
await worker.start();
