/**
 * The demo: create a queue and its DLQ on the local stack, start two workers (as two Fargate tasks
 * would be) with the example jobs from handlers/, enqueue a burst, show live progress, summarise.
 */
import { GetQueueAttributesCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { createWriteStream, mkdirSync } from 'node:fs';
import { pino } from 'pino';
import { chargeInvoice, importDone, importFile, importRow, resizeImage, sendWelcomeEmail } from '../handlers/index.js';
import { createProducer, createQueues, createWorker, JobStatusReader, type Worker } from '../src/index.js';
import { createCloudWatchClient, createDynamoClient, createSqsClient, SqsQueuePort } from '../src/adapters/index.js';
import { CloudWatchReader } from '../src/adapters/cloudwatch-reader.js';
import { createJobTable } from '../src/adapters/dynamodb-store.js';
import { SqsQueueAdmin } from '../src/adapters/sqs-admin.js';
import { renderJob } from '../src/cli/job-commands.js';
import { resolveAwsSettings, resolveCloudWatchSettings, resolveDynamoSettings } from '../src/config/env.js';
import { Progress } from './demo-progress.js';
import { renderDeadLetters, renderStats } from '../src/cli/render.js';
import { listDeadLetters } from '../src/ops/dlq-scan.js';
import { collectStats } from '../src/ops/stats.js';

const EMAILS = 300;
const IMAGES = 8;
const INVOICES = 20;
const CANCELLED = 2;
const DUPLICATES = 10;
const POISON = [
  '{"this is": not json',
  '{"v":1,"id":"p-1","job":"mine-bitcoin","args":{}}',
  '{"v":1,"id":"p-2","job":"resize-image","args":{"width":"wide"}}',
];
const VISIBILITY_SECONDS = 4;
const IMPORT_ROWS = 1_000;
const TIME_LIMIT_MS = 180_000;

const aws = resolveAwsSettings({});
const sqs = createSqsClient(aws);
const name = `demo-${Date.now().toString(36)}`;
const queues = await createQueues(sqs, { name, maxReceiveCount: 4, visibilityTimeout: VISIBILITY_SECONDS });
console.log(`queue ${queues.queueUrl}\ndlq   ${queues.dlqUrl}`);

// The job store (job status, progress, fan-out): a table on DynamoDB Local.
const table = `${name}-jobs`;
const dynamo = createDynamoClient(resolveDynamoSettings({}));
await createJobTable(dynamo, table);
dynamo.destroy();
const store = { table };

mkdirSync('.local', { recursive: true });
const logFile = '.local/demo-workers.log';
const logger = pino({ level: 'info' }, createWriteStream(logFile));
const progress = new Progress();
const jobs = [sendWelcomeEmail, resizeImage, chargeInvoice, importFile, importRow, importDone];
const workers: Worker[] = [1, 2].map((n) =>
  createWorker({
    queues: [queues.queueUrl],
    jobs,
    concurrency: 16,
    visibilityTimeoutSeconds: VISIBILITY_SECONDS,
    waitTimeSeconds: 2,
    handleSignals: false,
    logger: logger.child({ worker: n }),
    metrics: { sink: 'cloudwatch', namespace: `SqsJobsDemo/${name}` },
    store,
    progressIntervalMs: 250,
  }),
);
for (const w of workers) progress.watch(w);
await Promise.all(workers.map((w) => w.start()));
console.log(
  `2 workers started (concurrency 16 each, visibility ${VISIBILITY_SECONDS}s, dedupe on ${process.env.SQS_JOBS_MEMCACHED ?? 'off'})`,
);

const producer = createProducer({ queueUrl: queues.queueUrl, jobs, store });
const started = Date.now();
await producer.enqueueMany(
  sendWelcomeEmail,
  Array.from({ length: EMAILS }, (_, i) => ({ userId: `user-${i}`, failureRate: 0.15 })),
  {
    jobIds: Array.from({ length: EMAILS }, (_, i) => `welcome-${name}-${i}`),
  },
);
await producer.enqueueMany(
  resizeImage,
  Array.from({ length: IMAGES }, (_, i) => ({ imageKey: `uploads/${i}.png`, width: 640, workMs: VISIBILITY_SECONDS * 2_000 })),
);
await producer.enqueueMany(
  chargeInvoice,
  Array.from({ length: INVOICES }, (_, i) => ({
    invoiceId: `inv-${i}`,
    status: i < CANCELLED ? ('cancelled' as const) : ('open' as const),
  })),
);
// The same job ids again, as a producer retrying after a timeout would send them: they must not run twice.
await producer.enqueueMany(
  sendWelcomeEmail,
  Array.from({ length: DUPLICATES }, (_, i) => ({ userId: `user-${i}`, failureRate: 0 })),
  {
    jobIds: Array.from({ length: DUPLICATES }, (_, i) => `welcome-${name}-${i}`),
  },
);
for (const body of POISON) await sqs.send(new SendMessageCommand({ QueueUrl: queues.queueUrl, MessageBody: body }));
const total = EMAILS + IMAGES + INVOICES + DUPLICATES + POISON.length;
console.log(
  `enqueued ${total} messages in ${Date.now() - started} ms: ${EMAILS} emails (15% fail and retry), ${IMAGES} image resizes (${VISIBILITY_SECONDS * 2}s each, twice the visibility timeout), ${INVOICES} invoices (${CANCELLED} cancelled), ${DUPLICATES} duplicate ids, ${POISON.length} poison\n`,
);

const tty = process.stdout.isTTY;
let lastPrint = 0;
while (progress.finished < total && Date.now() - started < TIME_LIMIT_MS) {
  await new Promise((r) => setTimeout(r, 250));
  const line = progress.line(total, Date.now() - started);
  if (tty) process.stdout.write(`\r\x1b[2K${line}`);
  else if (Date.now() - lastPrint >= 2_000) {
    console.log(line);
    lastPrint = Date.now();
  }
}
const finalLine = progress.line(total, Date.now() - started);
process.stdout.write(tty ? `\r\x1b[2K${finalLine}\n` : `${finalLine}\n`);
const burstTimedOut = progress.finished < total;

console.log(`\nsummary${burstTimedOut ? ' (stopped at the time limit)' : ''}`);
for (const [job, c] of progress.perJob)
  console.log(`  ${job.padEnd(20)} succeeded ${String(c.ok).padStart(4)}   failed attempts ${c.failed}`);
console.log(`  duplicates deleted without running: ${progress.duplicates}`);
console.log(`  dead-lettered: ${progress.deadLettered} (${[...progress.deadReasons].map(([r, n]) => `${r} ${n}`).join(', ')})`);
console.log(`  every message accounted for: ${progress.finished} of ${total}`);
const counts = async (queueUrl: string) => {
  const { Attributes: a = {} } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
    }),
  );
  const n = (v: string | undefined) => Number(v ?? 0);
  return {
    visible: n(a.ApproximateNumberOfMessages),
    inFlight: n(a.ApproximateNumberOfMessagesNotVisible),
    delayed: n(a.ApproximateNumberOfMessagesDelayed),
  };
};
const depth = async (queueUrl: string) => {
  const c = await counts(queueUrl);
  return `${c.visible} visible, ${c.inFlight} in flight`;
};

// A fan-out: one tracked import-file job splits into a job per row; import-done runs once they have all ended.
const importStarted = Date.now();
const { jobId: importId } = await producer.enqueue(importFile, { file: 'users.csv', rows: IMPORT_ROWS }, { track: true });
console.log(
  `\nfan-out: import-file ${importId} splits users.csv into ${IMPORT_ROWS} import-row jobs; import-done runs once they have all ended`,
);
console.log(`$ sqs-jobs job ${importId} --table ${table} --watch`);
const reader = new JobStatusReader(store);
const importDoneRuns = () => progress.perJob.get('import-done')?.ok ?? 0;
lastPrint = 0;
let importLine = '';
while (importDoneRuns() === 0 && Date.now() - started < TIME_LIMIT_MS) {
  await new Promise((r) => setTimeout(r, 250));
  const view = await reader.get(importId);
  importLine = view === undefined ? `${importId}  not recorded yet` : renderJob(view);
  if (tty) process.stdout.write(`\r\x1b[2K${importLine}`);
  else if (Date.now() - lastPrint >= 1_000) {
    console.log(importLine);
    lastPrint = Date.now();
  }
}
const importView = await reader.get(importId);
importLine = importView === undefined ? importLine : renderJob(importView);
process.stdout.write(tty ? `\r\x1b[2K${importLine}\n` : `${importLine}\n`);
console.log(
  `import-done ran ${importDoneRuns()} time(s), ${((Date.now() - importStarted) / 1000).toFixed(1)} s after the import was enqueued`,
);
reader.close();
await Promise.all(workers.map((w) => w.stop()));
producer.close();

const timedOut = burstTimedOut || importDoneRuns() !== 1;
// The accounting must close: nothing left in the queue, and every dead letter one the workers sent,
// with its reason (SQS's redrive, which gives none, must never have had to take a message).
const settled = async () => {
  for (let i = 0; i < 40; i++) {
    const [q, d] = await Promise.all([counts(queues.queueUrl), counts(queues.dlqUrl)]);
    if (q.visible + q.inFlight + q.delayed === 0 && d.inFlight === 0) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  return counts(queues.queueUrl);
};
const left = await settled();
const deadLetters = await listDeadLetters(new SqsQueuePort(sqs), queues.dlqUrl, 1_000);
const leftCount = left.visible + left.inFlight + left.delayed;
const noReason = deadLetters.filter((l) => l.reason === 'redrive').length;
const problems = [
  leftCount > 0
    ? `${leftCount} message(s) left in the queue (${left.visible} visible, ${left.inFlight} in flight, ${left.delayed} delayed)`
    : '',
  noReason > 0 ? `${noReason} dead letter(s) moved by SQS's redrive, with no sqsjobs-dlq-reason` : '',
  deadLetters.length !== progress.deadLettered
    ? `the DLQ holds ${deadLetters.length} message(s), the workers dead-lettered ${progress.deadLettered}`
    : '',
].filter(Boolean);
if (problems.length === 0)
  console.log(
    `\naccounting closes: the queue is empty, the DLQ holds the ${deadLetters.length} dead letters the workers sent, each with its reason`,
  );
else console.log(`\nACCOUNTING DOES NOT CLOSE:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
console.log(`  as SQS sees it: queue ${await depth(queues.queueUrl)}; DLQ ${await depth(queues.dlqUrl)}`);
// CloudWatch has its own endpoint (AWS_ENDPOINT_URL_CLOUDWATCH, else AWS_ENDPOINT_URL), never SQS's.
const cw = createCloudWatchClient(resolveCloudWatchSettings({}));
console.log(`\n$ sqs-jobs stats --queue ${queues.queueUrl} --namespace SqsJobsDemo/${name}`);
console.log(
  renderStats(
    await collectStats(
      { queue: new SqsQueuePort(sqs), admin: new SqsQueueAdmin(sqs), metrics: new CloudWatchReader(cw) },
      { queueUrls: [queues.queueUrl], namespace: `SqsJobsDemo/${name}`, windowMinutes: 15 },
    ),
  ),
);
console.log(`\n$ sqs-jobs dlq list --queue ${queues.queueUrl}`);
console.log(renderDeadLetters(deadLetters));
cw.destroy();
console.log(
  `\nworker logs: ${logFile}\ninspect the DLQ: aws --endpoint-url ${aws.endpoint ?? ''} sqs receive-message --queue-url ${queues.dlqUrl} --message-attribute-names All`,
);
sqs.destroy();
process.exit(timedOut || problems.length > 0 ? 1 : 0);
