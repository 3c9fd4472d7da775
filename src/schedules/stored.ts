import { z } from 'zod';
import { type CatchUp, MAX_CATCH_UP, occurrencesOf } from './catch-up.js';
import { OVERLAPS, type Overlap, type ScheduleDefinition } from './define.js';
import { everyProblem } from './every.js';
import { cronProblem, type Recurrence, zoneProblem } from './recurrence.js';

/*
 * A schedule as the store keeps it (ScheduleRecord.spec): JSON that any worker, of this version or
 * another, reads back into its occurrences and what to send. What it cannot read it refuses with
 * the reason; the tick leaves such a schedule alone and says so.
 */

const storedSchema = z.object({
  v: z.literal(1),
  job: z.string().min(1),
  args: z.unknown(),
  queueUrl: z.string().min(1),
  cron: z.string().optional(),
  every: z.string().optional(),
  tz: z.string(),
  overlap: z.enum(OVERLAPS),
  catchUp: z.union([
    z.enum(['none', 'latest']),
    z.object({ withinS: z.number().int().min(1), max: z.number().int().min(1).max(MAX_CATCH_UP) }),
  ]),
  startS: z.number().int().optional(),
  endS: z.number().int().optional(),
});

export type StoredSpec = z.infer<typeof storedSchema>;

/** What a tick needs of a stored schedule: what to send where, its rules, its occurrences. */
export interface Plan {
  /** The spec as stored. */
  readonly spec: StoredSpec;
  readonly job: string;
  readonly args: unknown;
  readonly queueUrl: string;
  readonly overlap: Overlap;
  readonly catchUp: CatchUp;
  readonly occurrences: Recurrence;
}

/** The stored form of `def`, sending to `queueUrl`: the same JSON text for the same schedule (so a second sync changes nothing). */
export function storedSpec(def: ScheduleDefinition, queueUrl: string): string {
  const spec: StoredSpec = {
    v: 1,
    job: def.job.name,
    args: def.args,
    queueUrl,
    ...(def.cron === undefined ? {} : { cron: def.cron }),
    ...(def.every === undefined ? {} : { every: def.every }),
    tz: def.tz,
    overlap: def.overlap,
    catchUp: def.catchUp,
    ...(def.startS === undefined ? {} : { startS: def.startS }),
    ...(def.endS === undefined ? {} : { endS: def.endS }),
  };
  return JSON.stringify(spec);
}

/** A stored spec read back; a string: why it cannot be. */
export function planOf(text: string): Plan | string {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return 'its spec is not JSON';
  }
  const parsed = storedSchema.safeParse(json);
  if (!parsed.success) return `its spec is not one this version reads: ${parsed.error.issues[0]?.message ?? 'invalid'}`;
  const s = parsed.data;
  if ((s.cron === undefined) === (s.every === undefined)) return 'its spec has neither cron nor every, or both';
  const problem = s.every !== undefined ? everyProblem(s.every) : (zoneProblem(s.tz) ?? cronProblem(s.cron!, s.tz));
  if (problem !== undefined) return `its ${s.every !== undefined ? 'every' : 'cron or zone'} ${problem}`;
  return {
    spec: s,
    job: s.job,
    args: s.args,
    queueUrl: s.queueUrl,
    overlap: s.overlap,
    catchUp: s.catchUp,
    occurrences: occurrencesOf(s),
  };
}
