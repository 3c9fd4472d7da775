import { z } from 'zod';
import { SCHEDULE_ID_PATTERN } from '../core/envelope.js';
import { cronExpression, type Expression, rateExpression } from './eventbridge-expression.js';

/**
 * A schedule declared in the jobs module, as the stack reads it when EventBridge Scheduler fires
 * the declared schedules (`jobStore.scheduler: 'eventbridge'`): what `scheduleSettingsOf` takes
 * from the module's exports. Its occurrence runs as the job `<id>:<epoch seconds>`, the one the
 * workers' tick would send.
 */
export const scheduleSettingSchema = z
  .object({
    id: z.string().regex(SCHEDULE_ID_PATTERN, 'must be a schedule id (as defineSchedule takes it)'),
    job: z.string().min(1).max(80),
    args: z.unknown(),
    cron: z.string().optional(),
    everySeconds: z.number().int().positive().optional(),
    tz: z.string().default('UTC'),
    start: z.iso.datetime({ offset: true }).optional(),
    end: z.iso.datetime({ offset: true }).optional(),
    overlap: z.string().default('skip'),
    catchUp: z.unknown().default('latest'),
  })
  .strict();

export type ScheduleSetting = z.output<typeof scheduleSettingSchema>;

/** What EventBridge Scheduler takes as a target's input, in characters. */
const MAX_INPUT = 8_192;

/**
 * The schedules a module exports (made by defineSchedule), as the stack's `schedules` setting:
 * `schedules: scheduleSettingsOf(Object.values(await import('./jobs.js')))`.
 */
export function scheduleSettingsOf(exports: readonly unknown[]): ScheduleSetting[] {
  type Definition = {
    kind: string;
    id: string;
    job: { name: string };
    args: unknown;
    cron: string | undefined;
    tz: string;
    overlap: string;
    catchUp: unknown;
    startS: number | undefined;
    endS: number | undefined;
    occurrences: { periodS: number | undefined };
  };
  const iso = (s: number) => new Date(s * 1000).toISOString();
  return exports
    .filter((d): d is Definition => (d as Definition | undefined)?.kind === 'sqs-jobs/schedule')
    .map((d) => ({
      id: d.id,
      job: d.job.name,
      args: d.args,
      ...(d.cron === undefined ? { everySeconds: d.occurrences.periodS } : { cron: d.cron }),
      tz: d.tz,
      ...(d.startS === undefined ? {} : { start: iso(d.startS) }),
      ...(d.endS === undefined ? {} : { end: iso(d.endS) }),
      overlap: d.overlap,
      catchUp: d.catchUp,
    }));
}

/** The body EventBridge Scheduler sends at each occurrence: the job, its args, the schedule and the occurrence's time (filled in by EventBridge). */
export function scheduleInput(s: ScheduleSetting, tracked: boolean): string {
  return JSON.stringify({
    v: 1,
    job: s.job,
    args: s.args,
    schedule: s.id,
    scheduledAt: '<aws.scheduler.scheduled-time>',
    ...(tracked ? { track: true } : {}),
  });
}

/** The rule of `s` as EventBridge Scheduler writes it, or why it cannot. */
export function expressionOf(s: ScheduleSetting): Expression {
  if ((s.cron === undefined) === (s.everySeconds === undefined)) return { problem: 'needs cron or everySeconds, one of them' };
  return s.cron === undefined ? rateExpression(s.everySeconds!) : cronExpression(s.cron);
}

/** What EventBridge Scheduler cannot do of each schedule: a synth error, naming the schedule and the field. */
export function scheduleSettingsIssues(schedules: readonly ScheduleSetting[]): { path: (string | number)[]; message: string }[] {
  const issues: { path: (string | number)[]; message: string }[] = [];
  const ids = new Set<string>();
  schedules.forEach((s, i) => {
    const at = (field: string, message: string) => issues.push({ path: ['schedules', i, field], message: `${s.id}: ${message}` });
    if (ids.has(s.id)) at('id', 'listed twice');
    ids.add(s.id);
    const expression = expressionOf(s);
    if ('problem' in expression) at(s.cron === undefined ? 'everySeconds' : 'cron', expression.problem);
    if (s.overlap !== 'allow')
      at('overlap', `EventBridge Scheduler has no overlap rule: declare it with overlap: 'allow' (it is '${s.overlap}')`);
    if (s.catchUp !== 'none')
      at(
        'catchUp',
        `EventBridge Scheduler does not catch up after downtime: declare it with catchUp: 'none' (it is ${JSON.stringify(s.catchUp)})`,
      );
    if (scheduleInput(s, true).length > MAX_INPUT)
      at('args', `its message would be over EventBridge Scheduler's ${MAX_INPUT} characters of input`);
  });
  return issues;
}
