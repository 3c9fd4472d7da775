import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scheduleSettingsOf } from '../../src/cdk/index.js';
import { cronExpression, rateExpression } from '../../src/cdk/eventbridge-expression.js';
import { defineJob } from '../../src/core/job.js';
import { defineSchedule } from '../../src/schedules/define.js';
import { synth } from './synth.js';

// `scheduler: 'eventbridge'`: the declared schedules as EventBridge Scheduler schedules, in the
// template; what EventBridge cannot express is a synth error. A message of the shape these send
// runs through a real worker in test/integration/schedules.test.ts.

const report = defineJob({ name: 'report', args: z.object({ team: z.string() }), handle: () => {} });
const nightly = defineSchedule({
  id: 'acme:nightly',
  job: report,
  args: { team: 'acme' },
  cron: '30 2 * * 1-5',
  tz: 'Europe/Berlin',
  overlap: 'allow',
  catchUp: 'none',
});
const hourly = defineSchedule({
  id: 'hourly',
  job: report,
  args: { team: 'all' },
  every: '1h',
  overlap: 'allow',
  catchUp: 'none',
  start: '2027-01-01T00:00:00Z',
});

describe('cron and rate as EventBridge Scheduler writes them', () => {
  it.each([
    ['30 2 * * *', 'cron(30 2 * * ? *)'],
    ['0 30 2 * * *', 'cron(30 2 * * ? *)'], // seconds 0: dropped
    ['*/15 * * * *', 'cron(0/15 * * * ? *)'],
    ['0 9 * * 1-5', 'cron(0 9 ? * 2-6 *)'], // cron's Monday-Friday is EventBridge's 2-6
    ['0 9 * * 0', 'cron(0 9 ? * 1 *)'],
    ['0 9 * * 7', 'cron(0 9 ? * 1 *)'],
    ['0 9 * * 5-7', 'cron(0 9 ? * 6-7,1 *)'],
    ['0 9 * * MON,FRI', 'cron(0 9 ? * MON,FRI *)'],
    ['0 9 * * 5L', 'cron(0 9 ? * 6L *)'],
    ['0 9 * * 1#2', 'cron(0 9 ? * 2#2 *)'],
    ['0 0 1 * *', 'cron(0 0 1 * ? *)'],
    ['@daily', 'cron(0 0 * * ? *)'],
  ])('%s → %s', (cron, expression) => expect(cronExpression(cron)).toEqual({ expression }));

  it.each([
    ['*/30 * * * * *', /no seconds/],
    ['0 9 1 * 1', /both the day of the month and the day of the week/],
    ['0 9 * * 6-1', /wraps past Saturday/],
    ['0 9 * * */2', /weekday "\*\/2"/],
  ])('%s cannot be expressed', (cron, problem) => expect(cronExpression(cron)).toEqual({ problem: expect.stringMatching(problem) }));

  it('rates of whole minutes, hours and days; not seconds', () => {
    expect(rateExpression(60)).toEqual({ expression: 'rate(1 minute)' });
    expect(rateExpression(300)).toEqual({ expression: 'rate(5 minutes)' });
    expect(rateExpression(7_200)).toEqual({ expression: 'rate(2 hours)' });
    expect(rateExpression(86_400)).toEqual({ expression: 'rate(1 day)' });
    expect(rateExpression(90)).toEqual({ problem: expect.stringMatching(/finest grain is a minute/) });
  });
});

describe("scheduler: 'eventbridge'", () => {
  it('makes a schedule each, in its zone, sending the job with the occurrence time; no schedules sync at deploy', () => {
    const t = synth({ scheduler: 'eventbridge', schedules: scheduleSettingsOf([nightly, hourly, report]), jobStore: { schedules: true } });
    const schedules = Object.values(t.findResources('AWS::Scheduler::Schedule')).map((r) => r.Properties);
    expect(schedules).toHaveLength(2);
    const berlin = schedules.find((p) => p.ScheduleExpression === 'cron(30 2 ? * 2-6 *)')!;
    expect(berlin).toMatchObject({ ScheduleExpressionTimezone: 'Europe/Berlin', FlexibleTimeWindow: { Mode: 'OFF' }, State: 'ENABLED' });
    expect(JSON.parse(berlin.Target.Input)).toEqual({
      v: 1,
      job: 'report',
      args: { team: 'acme' },
      schedule: 'acme:nightly',
      scheduledAt: '<aws.scheduler.scheduled-time>',
      track: true,
    });
    expect(JSON.stringify(berlin.Target.DeadLetterConfig)).toMatch(/DeadLetterQueue/);
    const rate = schedules.find((p) => p.ScheduleExpression === 'rate(1 hour)')!;
    expect(rate.StartDate).toBe('2027-01-01T00:00:00.000Z');
    // The scheduler's role may send to the queue and its DLQ, nothing more.
    const roles = t.findResources('AWS::IAM::Role', {
      Properties: { AssumeRolePolicyDocument: { Statement: [{ Principal: { Service: 'scheduler.amazonaws.com' } }] } },
    });
    expect(Object.keys(roles)).toHaveLength(1);
    expect(Object.keys(t.findResources('Custom::AWS'))).toHaveLength(0); // EventBridge fires the declared ones: nothing put in the store
  });

  it('refuses at synth what EventBridge cannot express, naming the schedule and the field; schedules only with it', () => {
    const every10s = defineSchedule({ id: 'fast', job: report, args: { team: 'a' }, every: '10s', overlap: 'allow', catchUp: 'none' });
    const skip = defineSchedule({ id: 'skippy', job: report, args: { team: 'a' }, cron: '0 * * * *' });
    expect(() => synth({ scheduler: 'eventbridge', schedules: scheduleSettingsOf([every10s]) })).toThrow(
      /schedules\.0\.everySeconds: fast: every 10 s: EventBridge Scheduler's finest grain is a minute/,
    );
    expect(() => synth({ scheduler: 'eventbridge', schedules: scheduleSettingsOf([skip]) })).toThrow(
      /schedules\.0\.overlap: skippy: EventBridge Scheduler has no overlap rule.*schedules\.0\.catchUp: skippy/,
    );
    expect(() => synth({ schedules: scheduleSettingsOf([nightly]) })).toThrow(/schedules: read only with scheduler: 'eventbridge'/);
  });
});
