/**
 * The chaos fan-out, run by the fault test (test/faults/fanout-crash.test.ts, which asserts) and by
 * `npm run bench:fanout` (which times it): a tracked parent fans out `children` children with an
 * onComplete, in two worker processes (test/faults/worker-process.ts, FANOUT=1) of which one is
 * SIGKILLed every `killEveryMs` and restarted (harness.killLoop), while 5% of the children are sent
 * a second time (same job ids, `parent` set) and the parent's status is read `reads` times.
 *
 * The parent is handed to the first worker alone; the second starts once the parent is running, so
 * the loop's first kill (workers[0]) lands on the parent while it is still sending when sending
 * takes longer than `killEveryMs` (a small chunkSize makes it so at 10,000 children).
 *
 * It only gathers facts; the DLQ is left for the caller to drain (harness.account drains it too).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { createJobTable } from '../../src/adapters/dynamodb-store.js';
import { createDynamoClient } from '../../src/adapters/aws-clients.js';
import { createProducer, JobStatusReader } from '../../src/index.js';
import type { JobStatus } from '../../src/ports/status-store.js';
import {
  depth,
  ELASTICMQ,
  freshPair,
  killLoop,
  runTimes,
  spawnWorker,
  stopWorker,
  type WorkerProcess,
  workspace,
} from '../../test/faults/harness.js';
import { childArgsOf, type DoneArgs, failingChildren, fanOutJobs } from './jobs.js';

const CREDENTIALS = { AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'x' };

export interface ChaosOptions {
  readonly children: number;
  readonly chunkSize: number;
  readonly killEveryMs: number;
  /** DynamoDB Local's endpoint. */
  readonly dynamodb: string;
  /** Status reads of the parent, `readEveryMs` apart from the start until the completion has run, then one once the queue is empty; at most `maxReads`. */
  readonly readEveryMs: number;
  readonly maxReads: number;
  /** Give up waiting for the completion after this long. */
  readonly deadlineMs: number;
  readonly concurrency?: number;
}

/** One read of the parent's status; `unknown` when the store did not answer. */
export interface StatusRead {
  readonly atMs: number;
  readonly state: string;
  readonly done?: number;
  readonly total?: number;
  readonly ended?: number;
  readonly sent?: number;
}

/** One run of the parent's handler, from its effect lines. */
export interface ParentRun {
  readonly attempt: number;
  readonly pid: number;
  readonly startedAt: number;
  /** fanOut.sent when the run started: where it resumed (0 on the first run, -1 if the store did not answer). */
  readonly cursor: number;
  /** When every child had been sent, when this run got that far. */
  readonly fannedAt: number | undefined;
}

export interface ChaosResult {
  readonly parentId: string;
  readonly queueUrl: string;
  readonly dlqUrl: string;
  readonly effects: string;
  readonly table: string;
  readonly childIds: readonly string[];
  readonly expectedFailed: number;
  /** Child job ids sent a second time, and how many of those ran twice. */
  readonly duplicatesSent: number;
  /** Runs of each child id (the effect lines). */
  readonly childRuns: ReadonlyMap<string, number>;
  readonly completionRuns: readonly { readonly at: number; readonly args: DoneArgs }[];
  readonly parentRuns: readonly ParentRun[];
  /** The parent's record at the end. */
  readonly final: JobStatus | undefined;
  readonly reads: readonly StatusRead[];
  readonly kills: number;
  readonly exitCodes: readonly (number | null)[];
  readonly queueEmpty: boolean;
  /** Epoch ms. */
  readonly enqueuedAt: number;
  readonly lastChildAt: number | undefined;
  readonly completedAt: number | undefined;
}

/** The reads' ended counts (progress.done, else fanOut succeeded + failed), and how often one went down. */
export function monotonic(reads: readonly StatusRead[]): { known: number; backwards: number; unknown: number } {
  let last = Number.NEGATIVE_INFINITY;
  let backwards = 0;
  let known = 0;
  for (const r of reads) {
    const n = r.done ?? r.ended;
    if (n === undefined) continue;
    known++;
    if (n < last) backwards++;
    last = Math.max(last, n);
  }
  return { known, backwards, unknown: reads.filter((r) => r.state === 'unknown').length };
}

export async function runFanOutChaos(o: ChaosOptions): Promise<ChaosResult> {
  const dynamo = createDynamoClient({ endpoint: o.dynamodb, region: 'us-east-1' }, {}, CREDENTIALS);
  const table = `fanout-${randomUUID().slice(0, 8)}`;
  await createJobTable(dynamo, table);
  const store = { table, endpoint: o.dynamodb };
  // A kill costs the parent one unfinished run (its return while the dead worker's lock lives is
  // re-sent, not counted), or a receive when the dead worker's long poll took one; at full scale
  // on 2 cores the parent is killed about 50 times while it sends: room for twice that.
  const { queueUrl, dlqUrl } = await freshPair('fanout-crash', 5, 100);
  const ws = workspace('fanout-crash');
  const env = {
    QUEUE_URL: queueUrl,
    EFFECTS_LOG: ws.effects,
    LOCK_PREFIX: ws.lockPrefix,
    CONCURRENCY: String(o.concurrency ?? 10),
    VISIBILITY: '5',
    FANOUT: '1',
    JOB_TABLE: table,
    DYNAMODB_ENDPOINT: o.dynamodb,
  };
  const jobs = fanOutJobs();
  const producer = createProducer({ queueUrl, endpoint: ELASTICMQ, region: 'us-east-1', store }, CREDENTIALS);
  const reader = new JobStatusReader(store, CREDENTIALS);
  const workers: WorkerProcess[] = [spawnWorker(env)];
  let killer: { stop: () => Promise<number> } | undefined;
  try {
    await workers[0]!.ready;
    const enqueuedAt = Date.now();
    const { jobId: parentId } = await producer.enqueue(
      jobs.parent,
      { children: o.children, chunkSize: o.chunkSize, tag: ws.lockPrefix },
      { track: true },
    );
    const status = async (): Promise<JobStatus | undefined> => {
      const v = await reader.get(parentId);
      return v?.state === 'unknown' ? undefined : (v as JobStatus | undefined);
    };
    // The parent is running (its fan-out opened) in workers[0]: now the second worker and the kills.
    await until(async () => (await status())?.fanOut !== undefined, 'the parent to open its fan-out', 60_000);
    workers.push(spawnWorker(env));
    await workers[1]!.ready;
    const childIds = Array.from({ length: o.children }, (_, i) => `${parentId}.c${i}`);
    const doneId = `${parentId}.done`;
    const completed = () => runTimes(ws.effects).has(doneId);
    const childSet = new Set(childIds);
    const childrenRun = () => [...runTimes(ws.effects).keys()].filter((id) => childSet.has(id)).length;
    // A kill every `killEveryMs`, and one each time a further quarter of the children have run, so a
    // fast machine still sees kills at a quarter, a half and three quarters of the fan-out; the next
    // kill does not wait for the last one's replacement to start (that can outlast the fan-out).
    let runAtKill = 0;
    killer = killLoop(
      workers,
      env,
      o.killEveryMs,
      () => {
        const run = childrenRun();
        if (run - runAtKill < o.children / 4) return false;
        runAtKill = run;
        return true;
      },
      false,
    );

    // The status reads, `readEveryMs` apart, until the completion has run, at most `maxReads - 1`;
    // the last one is taken once the queue is empty (the completion's message settled, so its end
    // is recorded), however long the run takes on a slow machine.
    const reads: StatusRead[] = [];
    const readOnce = async () => {
      const v = await reader.get(parentId);
      const atMs = Date.now() - enqueuedAt;
      if (v === undefined || v.state === 'unknown') reads.push({ atMs, state: v?.state ?? 'none' });
      else {
        const s = v as JobStatus;
        reads.push({
          atMs,
          state: s.state,
          ...(s.progress === undefined ? {} : { done: s.progress.done, total: s.progress.total }),
          ...(s.fanOut === undefined ? {} : { ended: s.fanOut.succeeded + s.fanOut.failed, sent: s.fanOut.sent }),
        });
      }
    };
    const reading = (async () => {
      while (reads.length < o.maxReads - 1 && !completed()) {
        await readOnce();
        await sleep(o.readEveryMs);
      }
    })();

    // 5% of the children sent a second time, in four waves: as the parent passes 10%, 35% and 60%
    // of its sends (copies of children it has sent, and of children it has not sent yet), and once
    // it has sent them all (copies of children that ran long ago, or are running).
    const dupes = Array.from({ length: o.children }, (_, i) => i).filter((i) => i % 20 === 17);
    const waves = [0.1, 0.35, 0.6, 1];
    const duplicating = (async () => {
      for (let w = 0; w < waves.length; w++) {
        const at = Math.ceil(o.children * waves[w]!);
        await until(async () => ((await status())?.fanOut?.sent ?? 0) >= at || completed(), `the parent to send ${at}`, o.deadlineMs);
        const wave = dupes.filter((_, k) => k % waves.length === w);
        await producer.enqueueMany(
          jobs.child,
          wave.map((i) => childArgsOf(i)),
          { jobIds: wave.map((i) => childIds[i]!), parent: parentId },
        );
      }
    })();

    // Kill until 90% of the children have run (or the completion has), then let the rest finish.
    await until(() => completed() || childrenRun() >= o.children * 0.9, '90% of the children to run', o.deadlineMs);
    const kills = await killer.stop();
    killer = undefined;
    await duplicating;
    await until(completed, 'the completion job to run', o.deadlineMs).catch(() => {});
    let queueEmpty = false;
    await until(
      async () => {
        const d = await depth(queueUrl);
        queueEmpty = d.visible + d.inFlight + d.delayed === 0;
        return queueEmpty;
      },
      'the queue to empty',
      o.deadlineMs,
    ).catch(() => {});
    await reading;
    await readOnce();
    await sleep(3_000); // a second completion run, if there were one, would land here
    const exitCodes = await Promise.all(workers.map((w) => stopWorker(w)));

    const times = runTimes(ws.effects);
    const lines = readLines(ws.effects);
    const childRuns = new Map(childIds.map((id) => [id, times.get(id)?.length ?? 0]));
    const completionRuns = lines
      .filter((l) => l[0] === doneId)
      .map((l) => ({ at: Number(l[1]), args: JSON.parse(l.slice(2).join(' ')) as DoneArgs }));
    const fanned = lines.filter((l) => l[0] === `${parentId}#fanned`);
    const parentRuns = lines
      .filter((l) => l[0] === `${parentId}#start`)
      .map((l) => {
        const attempt = Number(l[2]);
        const pid = Number(l[3]);
        const end = fanned.find((f) => Number(f[2]) === attempt && Number(f[3]) === pid);
        return { attempt, pid, startedAt: Number(l[1]), cursor: Number(l[4]), fannedAt: end === undefined ? undefined : Number(end[1]) };
      });
    const childTimes = childIds.flatMap((id) => times.get(id) ?? []);
    return {
      parentId,
      queueUrl,
      dlqUrl,
      effects: ws.effects,
      table,
      childIds,
      expectedFailed: failingChildren(o.children),
      duplicatesSent: dupes.length,
      childRuns,
      completionRuns,
      parentRuns,
      final: await status(),
      reads,
      kills,
      exitCodes,
      queueEmpty,
      enqueuedAt,
      lastChildAt: childTimes.length === 0 ? undefined : Math.max(...childTimes),
      completedAt: completionRuns[0]?.at,
    };
  } finally {
    await killer?.stop();
    await Promise.all(workers.map((w) => stopWorker(w, 10_000)));
    producer.close();
    reader.close();
    await dynamo.send(new DeleteTableCommand({ TableName: table })).catch(() => {});
    dynamo.destroy();
  }
}

function readLines(file: string): string[][] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split(' '));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`gave up after ${timeoutMs} ms waiting for ${what}`);
    await sleep(250);
  }
}
