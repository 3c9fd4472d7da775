import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob } from '../../../src/core/job.js';
import { ValidationError } from '../../../src/core/errors.js';
import { JOB_ID_PATTERN } from '../../../src/core/envelope.js';
import { occurrenceJobId } from '../../../src/core/envelope.js';
import { defineSchedule } from '../../../src/schedules/define.js';

const report = defineJob({ name: 'nightly-report', args: z.object({ team: z.string() }), handle: () => {} });

/** The ValidationError defineSchedule throws for `spec`, as "field: rule" lines. */
function problems(spec: Record<string, unknown>): string[] {
  try {
    defineSchedule({ id: 'nightly', job: report, args: { team: 'a' }, ...spec } as Parameters<typeof defineSchedule>[0]);
  } catch (error) {
    if (error instanceof ValidationError) return error.issues.map((i) => `${i.field}: ${i.rule}`);
    throw error;
  }
  return [];
}

describe('defineSchedule', () => {
  it('a nightly run at 03:00 in Berlin: its defaults, and its occurrences', () => {
    const s = defineSchedule({ id: 'nightly', job: report, args: { team: 'a' }, cron: '0 3 * * *', tz: 'Europe/Berlin' });
    expect(s).toMatchObject({ kind: 'sqs-jobs/schedule', id: 'nightly', tz: 'Europe/Berlin', overlap: 'skip', catchUp: 'latest' });
    const next = s.occurrences.next(Date.parse('2027-06-01T12:00:00Z') / 1000)!;
    expect(new Date(next * 1000).toISOString()).toBe('2027-06-02T01:00:00.000Z');
  });

  it('every, on a grid from its start; start and end bound it', () => {
    const s = defineSchedule({
      id: 'acme:sync',
      job: report,
      args: { team: 'a' },
      every: '15m',
      start: '2027-01-01T00:05:00Z',
      end: new Date('2027-01-01T01:00:00Z'),
      catchUp: { within: '1h' },
    });
    const at = (iso: string) => Date.parse(iso) / 1000;
    expect(s.occurrences.next(0)).toBe(at('2027-01-01T00:05:00Z'));
    expect(s.occurrences.next(at('2027-01-01T00:50:00Z'))).toBeUndefined(); // 00:50 is the last before the end
    expect(s.catchUp).toEqual({ withinS: 3_600, max: 100 });
  });

  it('each occurrence is a job id within the job id rule, whatever the schedule id', () => {
    const id = occurrenceJobId(`a${':'.repeat(99)}`, 99_999_999_999);
    expect(id.length).toBeLessThanOrEqual(128);
    expect(id).toMatch(JOB_ID_PATTERN);
    expect(occurrenceJobId('nightly', 1_806_800_400)).toBe('nightly:1806800400');
  });

  it.each([
    [{ cron: '0 3 * * *', every: '1h' }, 'cron: give either cron or every, not both or neither'],
    [{}, 'cron: give either cron or every, not both or neither'],
    [{ cron: '0 3 * *' }, 'cron: must be a cron pattern of 5 fields'],
    [{ cron: '0 3 31 2 *' }, 'cron: never matches a date'],
    [{ cron: '0 3 * * *', tz: 'Mars/Olympus' }, 'tz: must be an IANA time zone'],
    [{ every: '500ms' }, 'every: must be whole units of d, h, m and s'],
    [{ every: '0s' }, 'every: must be at least 1s'],
    [{ every: '1d', tz: 'Europe/Berlin' }, 'tz: applies to cron only'],
    [{ every: '1h', overlap: 'queue' }, "overlap: must be 'skip', 'buffer-one' or 'allow'"],
    [{ every: '1h', catchUp: { within: '1 hour' } }, 'catchUp: within must be whole units'],
    [{ every: '1h', catchUp: { within: '1h', max: 5_000 } }, 'catchUp'],
    [{ every: '1h', start: '2027-01-02T00:00:00Z', end: '2027-01-01T00:00:00Z' }, 'end: must be after start'],
    [{ every: '1h', start: 'tomorrow' }, 'start: must be a Date or an ISO 8601 date-time'],
    [{ every: '1h', id: 'no spaces' }, 'id: must be 1-100 characters'],
    [{ every: '1h', job: { name: 'x' } }, 'job: must be a job made by defineJob()'],
  ])('refuses %j: %s', (spec, problem) => {
    expect(problems(spec).join('\n')).toContain(problem);
  });

  it("checks the args against the job's schema now, naming the field", () => {
    expect(() => defineSchedule({ id: 'nightly', job: report, args: { team: 7 } as never, every: '1h' })).toThrow(
      /invalid args for job "nightly-report": args\.team/,
    );
  });
});
