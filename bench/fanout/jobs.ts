/**
 * The chaos fan-out's jobs, shared by the worker processes (test/faults/worker-process.ts, FANOUT=1),
 * the fault test that drives them (test/faults/fanout-crash.test.ts) and bench/fanout: a tracked
 * parent that fans out `children` children in chunks of `chunkSize`, the children (a few ms each,
 * one in a hundred failing for good), and the completion job. Handlers are given by the caller; the
 * names, args and each child's args are fixed here so a duplicate sent by the test is the same job.
 */
import { z } from 'zod';
import type { AnyJob } from '../../src/core/job.js';
import { defineJob, fanOutResultSchema, type JobContext } from '../../src/index.js';

export const parentArgs = z.object({
  children: z.number().int().min(0).max(100_000),
  chunkSize: z.number().int().min(1).max(10_000),
  tag: z.string(),
});
export const childArgs = z.object({ i: z.number().int().min(0), ms: z.number().int().min(0).max(60_000), fail: z.boolean() });
export const doneArgs = fanOutResultSchema.extend({ tag: z.string() });
export type ParentArgs = z.output<typeof parentArgs>;
export type ChildArgs = z.output<typeof childArgs>;
export type DoneArgs = z.output<typeof doneArgs>;

/** Child i's args: 2-10 ms of work; i % 100 === 37 fails for good (dead-lettered, counted as failed). */
export function childArgsOf(i: number): ChildArgs {
  return { i, ms: 2 + ((i * 7919) % 9), fail: i % 100 === 37 };
}

/** How many of n children fail for good. */
export function failingChildren(n: number): number {
  return Array.from({ length: n }, (_, i) => childArgsOf(i)).filter((a) => a.fail).length;
}

export interface FanOutHandlers {
  readonly parent: (args: ParentArgs, ctx: JobContext, jobs: { child: AnyJob; done: AnyJob }) => Promise<unknown>;
  readonly child: (args: ChildArgs, ctx: JobContext) => Promise<void>;
  readonly done: (args: DoneArgs, ctx: JobContext) => Promise<void>;
}

const noop = async () => {};

/** The three jobs; without handlers, definitions to enqueue with (a producer needs one). */
export function fanOutJobs(h: FanOutHandlers = { parent: noop, child: noop, done: noop }) {
  const child = defineJob({ name: 'fan-child', args: childArgs, handle: h.child });
  const done = defineJob({ name: 'fan-done', args: doneArgs, handle: h.done });
  const parent = defineJob({ name: 'fan-parent', args: parentArgs, track: true, handle: (a, ctx) => h.parent(a, ctx, { child, done }) });
  return { parent, child, done };
}
