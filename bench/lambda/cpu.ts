/**
 * 1. Per-record CPU on the success path, both handlers in this one process, interleaved invocation
 * by invocation: a round is `invocations` turns, and in each turn each side (and the floor) is
 * invoked once with `records` new no-op jobs, the side that goes first rotating, so that a busier
 * stretch of the shared 2-core machine (the load moves within a second) falls on all alike. Each
 * invocation is timed with process.cpuUsage() (user + system of this process: the handler, its SDK
 * clients, their HTTP; the servers are other processes), from its call to its answer, as one
 * container is invoked, one invocation at a time. Events and contexts are built before a round,
 * never inside a measurement, and a full GC runs before each round (run.sh gives --expose-gc): a
 * scavenge within the round falls on the invocation that fills the young generation, so each side
 * pays for garbage about as much as it makes. The calls each side made in the measured rounds are
 * counted (stack.ts), warm-up apart. The floor (floor.ts: the same two writes a record, bare) runs
 * in the same turns, so that what each handler spends above the writes both make can be told apart.
 */
import type { SqsBatchResponse, SqsEvent } from '../../src/lambda/event.js';
import { lambdaContext, noopEvent } from './events.js';
import type { Stack, Tallies } from './stack.js';

export interface CpuScale {
  readonly warmUpRounds: number;
  readonly rounds: number;
  readonly invocations: number;
  readonly records: number;
}

/** One side over the measured rounds. */
export interface SideCpu {
  /** CPU µs per record, one a round. */
  readonly cpuUsPerRecord: number[];
  /** Wall ms per invocation, one a round (DynamoDB Local's answers included). */
  readonly wallMsPerInvocation: number[];
  /** Calls per record, by operation. */
  readonly dynamo: Record<string, number>;
  readonly sqs: Record<string, number>;
  /** Records answered failed (none expected). */
  readonly failed: number;
  /** The warm-up's calls, in all (the first invocation's among them: sqs-jobs reads its queue's DLQ then). */
  readonly warmUp: { readonly sqs: Record<string, number>; readonly dynamo: Record<string, number> };
}

export interface CpuResult {
  readonly sqsJobs: SideCpu;
  readonly powertools: SideCpu;
  /** The floor's CPU µs per record, one a round. */
  readonly floor: number[];
  /** sqs-jobs ÷ Powertools CPU per record, one a round. */
  readonly ratios: number[];
}

type Handler = (event: SqsEvent, context: ReturnType<typeof lambdaContext>) => Promise<SqsBatchResponse>;
type Side = 'sqsJobs' | 'powertools';
type Runner = Side | 'floor';

const gc = (globalThis as { gc?: () => void }).gc;
const RUNNERS: readonly Runner[] = ['sqsJobs', 'powertools', 'floor'];

/** One invocation: its CPU (µs) and wall time (ms), and how many records it answered failed. */
async function invocation(handler: Handler, event: SqsEvent, context: ReturnType<typeof lambdaContext>) {
  const wall = performance.now();
  const cpu = process.cpuUsage();
  const failed = (await handler(event, context)).batchItemFailures.length;
  const used = process.cpuUsage(cpu);
  return { cpuUs: used.user + used.system, wallMs: performance.now() - wall, failed };
}

const perRecord = (t: Tallies['dynamo'], records: number) =>
  Object.fromEntries(Object.entries(t.snapshot()).map(([op, n]) => [op, n / records]));

export async function measureCpu(stack: Stack, scale: CpuScale, say: (line: string) => void): Promise<CpuResult> {
  const handlers: Record<Runner, Handler> = { sqsJobs: stack.sqsJobs, powertools: stack.powertools, floor: stack.floor };
  const perInvocation = scale.records;
  const perRound = scale.invocations * scale.records;
  const runs: Record<Runner, { cpu: number[]; wall: number[]; failed: number }> = {
    sqsJobs: { cpu: [], wall: [], failed: 0 },
    powertools: { cpu: [], wall: [], failed: 0 },
    floor: { cpu: [], wall: [], failed: 0 },
  };
  const warmUp = {} as Record<Side, SideCpu['warmUp']>;
  for (let round = -scale.warmUpRounds; round < scale.rounds; round++) {
    if (round === 0)
      for (const [side, t] of Object.entries(stack.calls) as [Side, Tallies][]) {
        warmUp[side] = { sqs: t.sqs.snapshot(), dynamo: t.dynamo.snapshot() };
        t.sqs.reset();
        t.dynamo.reset();
      }
    const events = RUNNERS.map(() => Array.from({ length: scale.invocations }, () => noopEvent(stack.queueUrl, perInvocation)));
    const contexts = RUNNERS.map(() => events[0]!.map(() => lambdaContext()));
    const sum = RUNNERS.map(() => ({ cpuUs: 0, wallMs: 0, failed: 0 }));
    gc?.();
    for (let turn = 0; turn < scale.invocations; turn++)
      for (let k = 0; k < RUNNERS.length; k++) {
        const at = (k + turn + Math.max(round, 0)) % RUNNERS.length;
        const r = await invocation(handlers[RUNNERS[at]!], events[at]![turn]!, contexts[at]![turn]!);
        sum[at]!.cpuUs += r.cpuUs;
        sum[at]!.wallMs += r.wallMs;
        sum[at]!.failed += r.failed;
      }
    if (round >= 0)
      RUNNERS.forEach((runner, k) => {
        runs[runner].cpu.push(sum[k]!.cpuUs / perRound);
        runs[runner].wall.push(sum[k]!.wallMs / scale.invocations);
        runs[runner].failed += sum[k]!.failed;
      });
    if (round >= 0 && (round + 1) % 10 === 0) say(`   round ${round + 1} of ${scale.rounds}`);
  }
  const records = scale.rounds * perRound;
  const side = (s: Side): SideCpu => ({
    cpuUsPerRecord: runs[s].cpu,
    wallMsPerInvocation: runs[s].wall,
    dynamo: perRecord(stack.calls[s].dynamo, records),
    sqs: perRecord(stack.calls[s].sqs, records),
    failed: runs[s].failed,
    warmUp: warmUp[s],
  });
  return {
    sqsJobs: side('sqsJobs'),
    powertools: side('powertools'),
    floor: runs.floor.cpu,
    ratios: runs.sqsJobs.cpu.map((us, i) => us / runs.powertools.cpu[i]!),
  };
}
