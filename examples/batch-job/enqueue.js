// @ts-check
import { createProducer } from 'sqs-jobs';
import { indexDocument } from './jobs.js';

// 300 documents of three tenants, sent 10 to a SendMessageBatch call. The queue: SQS_JOBS_QUEUE_URL.
const producer = createProducer();
const tenants = ['acme', 'globex', 'initech'];
const docs = Array.from({ length: 300 }, (_, i) => ({ tenant: tenants[i % 3] ?? 'acme', docId: `doc-${i}`, title: `Document ${i}` }));
const results = await producer.enqueueMany(indexDocument, docs);
console.log(JSON.stringify({ enqueued: results.length }));
producer.close();
