import { z } from 'zod';
import { SCHEDULE_ID_PATTERN } from '../core/envelope.js';
import { isDefinition } from '../core/job-registry.js';
import { type AnyDefinition, type JobArgs, validateArgs } from '../core/job.js';
import { ValidationError } from '../core/errors.js';
import { parseWith } from '../core/validation.js';
import { type CatchUp, MAX_CATCH_UP, occurrencesOf } from './catch-up.js';
import { everyProblem, everySeconds } from './every.js';
import { cronProblem, type Recurrence, zoneProblem } from './recurrence.js';

/*
 * A schedule: a job with its args, run at each occurrence of a cron pattern (in a time zone) or of
 * a fixed interval. Each occurrence is one job, whose id is `<schedule id>:<occurrence in epoch
 * seconds>`: the same id however many workers see it due, which the dedupe lock and job status
 * turn into one run.
 */

/** What to do with an occurrence while the previous one's job is still waiting or running. */
export const OVERLAPS = ['skip', 'buffer-one', 'allow'] as const;
export type Overlap = (typeof OVERLAPS)[number];

const DEFAULT_CATCH_UP_MAX = 100;

export interface ScheduleSpec<J extends AnyDefinition> {
  /** 1-100 of letters, digits, _ . : - (a tenant's schedules may be `<tenant>:<name>`). */
  id: string;
  job: J;
  /** Checked against the job's schema now; sent as is at every occurrence. */
  args: JobArgs<J>;
  /** 5 fields (minute hour day-of-month month day-of-week), or 6 with seconds first; on the local clock of `tz`. */
  cron?: string;
  /** A fixed interval of whole d, h, m, s ('30s', '1h30m'), at least 1s, on a grid from `start` (default: the Unix epoch). */
  every?: string;
  /** An IANA time zone for `cron` (default UTC). */
  tz?: string;
  /** While the previous occurrence's job waits or runs: `skip` this one (default), keep one to run after it (`buffer-one`), or `allow` both. */
  overlap?: Overlap;
  /**
   * After every worker was down: `latest` (default) runs the latest missed occurrence, `none` only
   * one at most a minute late, `{ within, max }` each one at most `within` late ('6h'), oldest first, at most `max` (default 100).
   */
  catchUp?: 'none' | 'latest' | { within: string; max?: number };
  /** No occurrence before this instant; also the grid's origin for `every`. */
  start?: Date | string;
  /** No occurrence after this instant. */
  end?: Date | string;
}

/** A schedule made by defineSchedule: put it with `sqs-jobs schedules sync` (exported from the jobs module) or `createSchedules().upsert`. */
export interface ScheduleDefinition {
  readonly kind: 'sqs-jobs/schedule';
  readonly id: string;
  readonly job: AnyDefinition;
  readonly args: unknown;
  readonly cron: string | undefined;
  readonly every: string | undefined;
  readonly tz: string;
  readonly overlap: Overlap;
  readonly catchUp: CatchUp;
  readonly startS: number | undefined;
  readonly endS: number | undefined;
  /** Its occurrences, within start and end. */
  readonly occurrences: Recurrence;
}

const INSTANT_RULE = "must be a Date or an ISO 8601 date-time with its offset ('2027-01-01T03:00:00Z')";
const instant = z.union([z.date({ error: INSTANT_RULE }), z.iso.datetime({ offset: true, error: INSTANT_RULE })], { error: INSTANT_RULE });

const specSchema = z
  .object({
    id: z.string().regex(SCHEDULE_ID_PATTERN, 'must be 1-100 characters of letters, digits, _ . : - and start with a letter or digit'),
    job: z.custom<AnyDefinition>(isDefinition, 'must be a job made by defineJob() or defineBatchJob()'),
    args: z.unknown(),
    cron: z.string().optional(),
    every: z.string().optional(),
    tz: z.string().optional(),
    overlap: z.enum(OVERLAPS, { error: "must be 'skip', 'buffer-one' or 'allow'" }).optional(),
    catchUp: z
      .union(
        [z.enum(['none', 'latest']), z.object({ within: z.string(), max: z.number().int().min(1).max(MAX_CATCH_UP).optional() }).strict()],
        { error: `must be 'none', 'latest' or { within, max? } (max 1-${MAX_CATCH_UP})` },
      )
      .optional(),
    start: instant.optional(),
    end: instant.optional(),
  })
  .strict()
  .superRefine((s, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    if ((s.cron === undefined) === (s.every === undefined)) issue('cron', 'give either cron or every, not both or neither');
    if (s.every !== undefined) {
      const problem = everyProblem(s.every);
      if (problem !== undefined) issue('every', problem);
      if (s.tz !== undefined)
        issue('tz', "applies to cron only: every is a fixed interval (a time of day in a zone is a cron, such as '0 3 * * *')");
    }
    const zone = s.tz === undefined ? undefined : zoneProblem(s.tz);
    if (zone !== undefined) issue('tz', zone);
    else if (s.cron !== undefined) {
      const problem = cronProblem(s.cron, s.tz ?? 'UTC');
      if (problem !== undefined) issue('cron', problem);
    }
    if (typeof s.catchUp === 'object' && everyProblem(s.catchUp.within) !== undefined)
      issue('catchUp', `within ${everyProblem(s.catchUp.within)}`);
    if (s.start !== undefined && s.end !== undefined && seconds(s.end) <= seconds(s.start)) issue('end', 'must be after start');
  });

/** Define a schedule; throws a ValidationError naming each field and rule (the args' by the job's schema). */
export function defineSchedule<J extends AnyDefinition>(spec: ScheduleSpec<J>): ScheduleDefinition {
  const s = parseWith(specSchema, spec, 'schedule', (issues) => new ValidationError('OPTIONS_INVALID', 'invalid schedule', issues));
  validateArgs(s.job, s.args);
  const startS = s.start === undefined ? undefined : Math.ceil(seconds(s.start));
  const endS = s.end === undefined ? undefined : Math.floor(seconds(s.end));
  const tz = s.tz ?? 'UTC';
  const catchUp: CatchUp =
    s.catchUp === undefined || typeof s.catchUp === 'string'
      ? (s.catchUp ?? 'latest')
      : { withinS: everySeconds(s.catchUp.within)!, max: s.catchUp.max ?? DEFAULT_CATCH_UP_MAX };
  return Object.freeze({
    kind: 'sqs-jobs/schedule',
    id: s.id,
    job: s.job,
    args: s.args,
    cron: s.cron,
    every: s.every,
    tz,
    overlap: s.overlap ?? 'skip',
    catchUp,
    startS,
    endS,
    occurrences: occurrencesOf({ cron: s.cron, every: s.every, tz, startS, endS }),
  });
}

function seconds(at: Date | string): number {
  return (typeof at === 'string' ? Date.parse(at) : at.getTime()) / 1000;
}

/** Whether `v` was made by defineSchedule (of this copy of sqs-jobs or another). */
export function isScheduleDefinition(v: unknown): v is ScheduleDefinition {
  return typeof v === 'object' && v !== null && (v as { kind?: unknown }).kind === 'sqs-jobs/schedule';
}
