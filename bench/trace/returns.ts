/**
 * The order in which one message's work moves between src/ files, measured on a real server:
 * every src/ file is instrumented as it loads (bench/trace/instrument.mjs) to report where control
 * enters it: a function starting, or an `await` resuming. One message, sent with the SDK (so the
 * producer's files do not show), is run by a worker on ElasticMQ (127.0.0.1:9324, started with
 * `npm run elasticmq:up`) with no memcached, from the send until 300 ms after it is settled. The
 * worker long-polls for 20 s, so its idle loop is parked while the message runs. Run in any tree
 * whose public API has createWorker and createQueues (so a tree from before a change can be measured the same way):
 *   TRACE_ROOT=$PWD node --import tsx --import ./bench/trace/register.mjs bench/trace/returns.ts
 * It prints, for a job that succeeds and one dead-lettered by an UnrecoverableError: the files
 * entered, how many times control moved from one file to another, and how many of those moves
 * went back into a file it had already left ("returns"), with the files returned to most.
 */
import { randomUUID } from 'node:crypto';
import { DeleteQueueCommand, GetQueueAttributesCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { pino } from 'pino';
import { z } from 'zod';

let tracing = false;
const trail: string[] = [];
const g = globalThis as unknown as Record<string, unknown>;
g.__trace = (file: string) => {
  if (tracing) trail.push(file);
};
g.__traceResume = (file: string, value: unknown) => {
  if (tracing) trail.push(file);
  return value;
};

const root = process.env.TRACE_ROOT ?? process.cwd();
const api = await import(`${root}/src/index.ts`);
const endpoint = process.env.TRACE_SQS_ENDPOINT ?? 'http://127.0.0.1:9324';
const aws = { endpoint, region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } };

const sqs = new SQSClient(aws);
const { queueUrl, dlqUrl } = await api.createQueues(sqs, { name: `trace-${randomUUID().slice(0, 8)}`, maxReceiveCount: 3 });
const ended = new Set<string>();
const job = api.defineJob({
  name: 'step',
  args: z.object({ fail: z.boolean() }),
  handle: ({ fail }: { fail: boolean }) => {
    if (fail) throw new api.UnrecoverableError('bad input');
  },
});
const worker = api.createWorker(
  {
    queues: [queueUrl],
    jobs: [job],
    endpoint,
    region: 'us-east-1',
    waitTimeSeconds: 20,
    deleteFlushMs: 0,
    handleSignals: false,
    logger: pino({ level: 'silent' }),
    metrics: { sink: 'off' },
  },
  { AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'x' },
);
for (const e of ['job:succeeded', 'job:dead-lettered'] as const) worker.on(e, (info: { jobId: string }) => ended.add(info.jobId));
await worker.start();
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
await pause(1_000); // the first long poll is parked

async function depth(url: string): Promise<number> {
  const out = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return Number(out.Attributes?.ApproximateNumberOfMessages ?? 0) + Number(out.Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0);
}

for (const fail of [false, true]) {
  const id = `trace-${randomUUID()}`;
  trail.length = 0;
  tracing = true;
  await sqs.send(
    new SendMessageCommand({
      QueueUrl: queueUrl,
      MessageBody: JSON.stringify({ v: 1, id, job: 'step', args: { fail }, enqueuedAt: new Date().toISOString() }),
      MessageAttributes: {
        'sqsjobs-job': { DataType: 'String', StringValue: 'step' },
        'sqsjobs-id': { DataType: 'String', StringValue: id },
      },
    }),
  );
  const deadline = Date.now() + 60_000;
  while (!ended.has(id) || (await depth(queueUrl)) > 0) {
    if (Date.now() > deadline) throw new Error(`job ${id} did not end within 60 s: is ElasticMQ up on ${endpoint}?`);
    await pause(20);
  }
  await pause(300);
  tracing = false;
  report(fail ? 'dead-lettered (UnrecoverableError)' : 'succeeded', [...trail]);
}
console.log(`\nDLQ holds ${await depth(dlqUrl)} (expected 1)`);
await worker.stop();
for (const url of [queueUrl, dlqUrl]) await sqs.send(new DeleteQueueCommand({ QueueUrl: url }));
sqs.destroy();

function report(what: string, events: string[]) {
  const seen = new Set<string>();
  const returnsTo = new Map<string, number>();
  let moves = 0;
  let previous: string | undefined;
  for (const file of events) {
    if (file !== previous) {
      if (previous !== undefined) moves++;
      if (seen.has(file)) returnsTo.set(file, (returnsTo.get(file) ?? 0) + 1);
      seen.add(file);
    }
    previous = file;
  }
  const returns = [...returnsTo.values()].reduce((a, b) => a + b, 0);
  const top = [...returnsTo.entries()].sort((a, b) => b[1] - a[1]).slice(0, 6);
  const inWorker = [...seen].filter((f) => f.startsWith('src/worker/')).length;
  console.log(
    `\n${what}: ${seen.size} files entered (${inWorker} in src/worker/), ${moves} moves between files, ${returns} returns to a file already left`,
  );
  console.log(`  returned to most: ${top.map(([f, n]) => `${f} ${n}`).join(', ')}`);
  console.log(`  files: ${[...seen].sort().join(', ')}`);
  if (process.env.TRACE_PATH) {
    const path = events.filter((f, i) => f !== events[i - 1]).map((f) => f.replace(/^src\/(worker\/)?/, '').replace(/\.ts$/, ''));
    console.log(`  path: ${path.join(' > ')}`);
  }
}
