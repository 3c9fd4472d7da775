/**
 * 1. Per-record CPU on the success path, both handlers in this one process, rounds interleaved
 * (the side that goes first alternates), so that a slower or busier stretch of the shared 2-core
 * machine falls on both alike. A round is, for each side, `invocations` invocations of `records`
 * new no-op jobs each, one after the other (as one container is invoked), timed with
 * process.cpuUsage() (user + system of this process: the handler, its SDK clients, their HTTP; the
 * servers are other processes). Events and contexts are built before a side's batch, and a full GC
 * runs before it (run.sh gives --expose-gc), so each side's batch pays for its own garbage, not for
 * the other's. The calls each side made in the measured rounds are counted (stack.ts), warm-up apart.
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
  /** sqs-jobs ÷ Powertools CPU per record, one a round. */
  readonly ratios: number[];
}

type Handler = (event: SqsEvent, context: ReturnType<typeof lambdaContext>) => Promise<SqsBatchResponse>;
type Side = 'sqsJobs' | 'powertools';

const gc = (globalThis as { gc?: () => void }).gc;

async function batch(handler: Handler, events: readonly SqsEvent[]) {
  const contexts = events.map(() => lambdaContext());
  gc?.();
  const wall = performance.now();
  const cpu = process.cpuUsage();
  let failed = 0;
  for (let i = 0; i < events.length; i++) failed += (await handler(events[i]!, contexts[i]!)).batchItemFailures.length;
  const used = process.cpuUsage(cpu);
  return { cpuUs: used.user + used.system, wallMs: performance.now() - wall, failed };
}

const perRecord = (t: Tallies['dynamo'], records: number) =>
  Object.fromEntries(Object.entries(t.snapshot()).map(([op, n]) => [op, n / records]));

export async function measureCpu(stack: Stack, scale: CpuScale, say: (line: string) => void): Promise<CpuResult> {
  const handlers: Record<Side, Handler> = { sqsJobs: stack.sqsJobs, powertools: stack.powertools };
  const perInvocation = scale.records;
  const perRound = scale.invocations * scale.records;
  const runs: Record<Side, { cpu: number[]; wall: number[]; failed: number }> = {
    sqsJobs: { cpu: [], wall: [], failed: 0 },
    powertools: { cpu: [], wall: [], failed: 0 },
  };
  const warmUp = {} as Record<Side, SideCpu['warmUp']>;
  for (let round = -scale.warmUpRounds; round < scale.rounds; round++) {
    if (round === 0)
      for (const [side, t] of Object.entries(stack.calls) as [Side, Tallies][]) {
        warmUp[side] = { sqs: t.sqs.snapshot(), dynamo: t.dynamo.snapshot() };
        t.sqs.reset();
        t.dynamo.reset();
      }
    const order: Side[] = round % 2 === 0 ? ['sqsJobs', 'powertools'] : ['powertools', 'sqsJobs'];
    for (const side of order) {
      const events = Array.from({ length: scale.invocations }, () => noopEvent(stack.queueUrl, perInvocation));
      const r = await batch(handlers[side], events);
      if (round < 0) continue;
      runs[side].cpu.push(r.cpuUs / perRound);
      runs[side].wall.push(r.wallMs / scale.invocations);
      runs[side].failed += r.failed;
    }
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
    ratios: runs.sqsJobs.cpu.map((us, i) => us / runs.powertools.cpu[i]!),
  };
}
