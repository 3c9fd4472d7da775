/**
 * What the pause watch costs an idle worker: four workers on an empty queue, two with `pauses` on
 * and two with `pauses: false`, for a window. Counted in each worker (worker.ts): the watch's
 * memcached gets (ControlNotices.seen) and job store reads (ControlStore.readPauses), and the
 * process's CPU. It runs beside the reach rounds (reach.ts), on a table and a key prefix of its own,
 * so that their pauses never move the version these workers watch.
 *
 * With `untold`, then a change the fleet is not told of (a pause made without memcached, as
 * `sqs-jobs pause` without SQS_JOBS_MEMCACHED does: memcached keeps the version before it): the
 * workers find it at their 30 s read of the store; their reads a second are counted over the last
 * UNTOLD_TAIL_S of UNTOLD_S after it.
 */
import { startWorker, type WorkerProcess } from './child.js';
import { sleep } from './figures.js';
import { createPauses, createQueues, createSqsClient, ENV, PAUSE_REREAD_MS, type Servers, serversOf } from './parts.js';
import type { Taken } from './worker.js';

const UNTOLD_TAIL_S = 10;
const UNTOLD_S = PAUSE_REREAD_MS / 1000 + 5 + UNTOLD_TAIL_S;

export interface IdleFigures {
  readonly windowS: number;
  /** Per worker with pauses on. */
  readonly getsPerSecond: number[];
  readonly reads: number[];
  /** CPU ms per minute of each worker, on and off. */
  readonly cpuOn: number[];
  readonly cpuOff: number[];
  /** Gets and reads of the workers with pauses off (0 expected). */
  readonly offCalls: number;
  /** After a change not told: each worker's store reads a second once it has found it. */
  readonly untoldReadsPerSecond?: number[];
}

export async function idleWatch(s: Servers & { windowS: number; untold: boolean }): Promise<IdleFigures> {
  const sqs = createSqsClient({ endpoint: s.sqs, region: 'us-east-1' }, {}, ENV);
  const { queueUrl } = await createQueues(sqs, { name: `pause-idle-${Date.now().toString(36)}`, visibilityTimeout: 30 });
  sqs.destroy();
  const modes = [true, false, true, false];
  const workers: WorkerProcess[] = [];
  const takeAll = () => Promise.all(workers.map((w) => w.take()));
  const per = (pauses: boolean, pick: (i: number) => number) => modes.flatMap((m, i) => (m === pauses ? [pick(i)] : []));
  try {
    const starting = modes.map((pauses) => startWorker({ ...serversOf(s), queueUrl, pauses, concurrency: 10, record: true }));
    for (const w of await Promise.allSettled(starting)) if (w.status === 'fulfilled') workers.push(w.value);
    if (workers.length < modes.length) throw new Error('an idle worker did not start');
    await sleep(2_000); // past the start's first read
    const before = await takeAll();
    const t0 = performance.now();
    await sleep(s.windowS * 1000);
    const after = await takeAll();
    const seconds = (performance.now() - t0) / 1000;
    const delta = (i: number, pick: (t: Taken) => number) => pick(after[i]!) - pick(before[i]!);
    const figures: IdleFigures = {
      windowS: seconds,
      getsPerSecond: per(true, (i) => delta(i, (t) => t.gets) / seconds),
      reads: per(true, (i) => delta(i, (t) => t.reads)),
      cpuOn: per(true, (i) => (delta(i, (t) => t.cpuMicros) / 1000 / seconds) * 60),
      cpuOff: per(false, (i) => (delta(i, (t) => t.cpuMicros) / 1000 / seconds) * 60),
      offCalls: per(false, (i) => after[i]!.gets + after[i]!.reads).reduce((a, b) => a + b, 0),
    };
    if (!s.untold) return figures;
    const untold = createPauses({ store: { table: s.table, endpoint: s.dynamodb } }, ENV);
    try {
      await untold.pause({ job: 'elsewhere' }, { by: 'bench:pause (no memcached)' });
    } finally {
      untold.close();
    }
    await sleep((UNTOLD_S - UNTOLD_TAIL_S) * 1000);
    const from = await takeAll();
    const t1 = performance.now();
    await sleep(UNTOLD_TAIL_S * 1000);
    const to = await takeAll();
    const tail = (performance.now() - t1) / 1000;
    return { ...figures, untoldReadsPerSecond: per(true, (i) => (to[i]!.reads - from[i]!.reads) / tail) };
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
  }
}
