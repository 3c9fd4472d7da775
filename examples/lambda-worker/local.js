// @ts-check
import { SqsQueuePort, createSqsClient } from 'sqs-jobs/adapters';
import { deliverToLambda } from 'sqs-jobs/testing';
import { handler } from './handler.js';

// Locally, in the event source mapping's place: receive what the queue has (SQS_JOBS_QUEUE_URL, on
// the local stack), hand it to the handler as Lambda would, delete what it did not report failed.
// Stops on Ctrl-C (SIGTERM) between deliveries.
const queueUrl = process.env.SQS_JOBS_QUEUE_URL;
if (!queueUrl) throw new Error('set SQS_JOBS_QUEUE_URL');
const client = createSqsClient({ endpoint: process.env.AWS_ENDPOINT_URL, region: process.env.AWS_REGION ?? 'us-east-1' });
const queue = new SqsQueuePort(client, client);
let stopping = false;
for (const signal of /** @type {const} */ (['SIGINT', 'SIGTERM'])) process.on(signal, () => (stopping = true));
while (!stopping) {
  const { records, failed } = await deliverToLambda(handler, queue, queueUrl);
  if (records.length > 0) console.log(JSON.stringify({ records: records.length, failed: failed.length }));
  else await new Promise((resolve) => setTimeout(resolve, 500));
}
client.destroy();
await handler.close(); // the handler's clients and timers: a local script must end (Lambda never calls this)
