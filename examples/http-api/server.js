// @ts-check
import express from 'express';
import { createProducer } from 'sqs-jobs';
import { createJobsApi, nodeHandler } from 'sqs-jobs/http';
import { jobs } from './jobs.js';

// SQS_JOBS_QUEUE_URL, SQS_JOBS_MEMCACHED and SQS_JOBS_JOB_TABLE say where the queue, the workers'
// memcached (cancel and admission read it) and the job store are.
const producer = createProducer({
  jobs,
  tiers: true,
  admission: { slaSeconds: Number(process.env.SLA_SECONDS ?? 30) },
});

const app = express();
// Put your authentication here: the API has none of its own.
app.use(nodeHandler(createJobsApi({ producer, basePath: '/api' })));
const port = Number(process.env.PORT ?? 3000);
const server = app.listen(port, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${port}/api`));

process.once('SIGTERM', () => server.close(() => producer.close()));
process.once('SIGINT', () => server.close(() => producer.close()));
