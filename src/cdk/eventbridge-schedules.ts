import * as iam from 'aws-cdk-lib/aws-iam';
import { CfnSchedule } from 'aws-cdk-lib/aws-scheduler';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { expressionOf, scheduleInput } from './schedule-settings.js';
import type { DeploySettings } from './settings.js';

/** How long EventBridge Scheduler tries to deliver an occurrence before it goes to the DLQ. */
const MAX_EVENT_AGE_S = 3_600;

/**
 * With `scheduler: 'eventbridge'`: an EventBridge Scheduler schedule for each declared one, in its
 * zone, sending the job to the queue with the occurrence's time in the body (the worker makes the
 * occurrence's job id from it, so a repeated delivery runs once). A delivery that keeps failing
 * goes to the stack's DLQ, where its alarm sees it. The settings were checked: every rule here is
 * one EventBridge can express.
 */
export function addEventBridgeSchedules(
  scope: Construct,
  s: DeploySettings,
  p: { queue: sqs.IQueue; dlq: sqs.IQueue; tracked: boolean },
): void {
  if (s.scheduler !== 'eventbridge' || s.schedules.length === 0) return;
  const role = new iam.Role(scope, 'SchedulerRole', {
    assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com'),
    description: "sqs-jobs: EventBridge Scheduler sends the declared schedules' jobs to the queue",
  });
  p.queue.grantSendMessages(role);
  p.dlq.grantSendMessages(role);
  for (const schedule of s.schedules) {
    const expression = expressionOf(schedule);
    if ('problem' in expression) throw new Error(`schedule ${schedule.id}: ${expression.problem}`); // checked with the settings
    new CfnSchedule(scope, `Schedule-${schedule.id}`, {
      description: `sqs-jobs schedule ${schedule.id}: job ${schedule.job}`,
      scheduleExpression: expression.expression,
      scheduleExpressionTimezone: schedule.tz,
      flexibleTimeWindow: { mode: 'OFF' },
      ...(schedule.start === undefined ? {} : { startDate: schedule.start }),
      ...(schedule.end === undefined ? {} : { endDate: schedule.end }),
      state: 'ENABLED',
      target: {
        arn: p.queue.queueArn,
        roleArn: role.roleArn,
        input: scheduleInput(schedule, p.tracked),
        retryPolicy: { maximumEventAgeInSeconds: MAX_EVENT_AGE_S, maximumRetryAttempts: 185 },
        deadLetterConfig: { arn: p.dlq.queueArn },
      },
    });
  }
}
