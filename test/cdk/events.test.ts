import { Match, type Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineEvent, subscriberQueueNameFor } from '../../src/core/event.js';
import { defineJob } from '../../src/core/job.js';
import { filterPolicyOf, queuePolicy } from '../../src/ops/events.js';
import { type EventSetting, eventSettingsOf } from '../../src/cdk/event-settings.js';
import { type DeploySettings, resolveSettings, visibilityTimeoutSeconds } from '../../src/cdk/settings.js';
import { synth, taskRoleStatements } from './synth.js';

// Two subscribers of one event (one with a filter), and one event on a topic it shares.
const EVENTS: EventSetting[] = [
  { event: 'order.placed', job: 'inventory.reserve' },
  { event: 'order.placed', job: 'eu.invoice', filterPolicy: { region: ['eu'], amount: [{ numeric: ['>', 100] }] } },
  { event: 'user.signed-up', topic: 'users', job: 'mail:welcome' },
];

/** The logical id of the only resource of `type` whose properties match `props`. */
function idOf(t: Template, type: string, props: object): string {
  const found = Object.keys(t.findResources(type, { Properties: props }));
  expect(found).toHaveLength(1);
  return found[0]!;
}

describe('SqsJobs events', () => {
  it('makes one topic per event, named as sqs-jobs names it, and a queue + DLQ per subscriber with the redrive and settings of the job queue', () => {
    const t = synth({ events: EVENTS, maxReceiveCount: 7, p99ProcessingSeconds: 45, messageRetentionSeconds: 86_400 });
    t.resourceCountIs('AWS::SNS::Topic', 2);
    t.hasResourceProperties('AWS::SNS::Topic', { TopicName: 'order-placed' });
    t.hasResourceProperties('AWS::SNS::Topic', { TopicName: 'users' });
    for (const job of ['inventory.reserve', 'eu.invoice', 'mail:welcome']) {
      const name = subscriberQueueNameFor(job);
      const dlq = idOf(t, 'AWS::SQS::Queue', { QueueName: `${name}-dlq`, MessageRetentionPeriod: 1_209_600 });
      t.hasResourceProperties('AWS::SQS::Queue', {
        QueueName: name,
        VisibilityTimeout: visibilityTimeoutSeconds({ p99ProcessingSeconds: 45 }),
        MessageRetentionPeriod: 86_400,
        RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [dlq, 'Arn'] }, maxReceiveCount: 7 },
      });
    }
    expect(Object.keys(t.findResources('AWS::SQS::Queue'))).toHaveLength(2 + 6);
    t.hasOutput('*', { Value: { Ref: Match.stringLikeRegexp('inventoryreserveQueue') } });
  });

  it('a FIFO event: a FIFO topic and FIFO subscriber queues and DLQ, named as provisionEvents names them', () => {
    const moved = defineEvent({ name: 'stock.moved', fifo: true, payload: z.object({}) });
    const ledger = defineJob({ name: 'ledger.sync', on: moved, handle: () => {} });
    const events = eventSettingsOf([ledger]);
    expect(events).toEqual([{ event: 'stock.moved', job: 'ledger.sync', topic: 'stock-moved.fifo', fifo: true }]);
    const t = synth({ events });
    t.hasResourceProperties('AWS::SNS::Topic', { TopicName: 'stock-moved.fifo', FifoTopic: true });
    const dlq = idOf(t, 'AWS::SQS::Queue', { QueueName: 'ledger-sync-dlq.fifo', FifoQueue: true });
    t.hasResourceProperties('AWS::SQS::Queue', {
      QueueName: subscriberQueueNameFor('ledger.sync', true),
      FifoQueue: true,
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [dlq, 'Arn'] } },
    });
    expect(() => synth({ events: [{ event: 'stock.moved', job: 'ledger.sync', topic: 'stock-moved.fifo' }] })).toThrow(
      /fifo: must be true/,
    );
  });

  it('lets SNS send to a subscriber queue only from its topic (aws:SourceArn), with the statement provisionEvents sets', () => {
    const t = synth({ events: EVENTS });
    const topic = idOf(t, 'AWS::SNS::Topic', { TopicName: 'order-placed' });
    const queue = idOf(t, 'AWS::SQS::Queue', { QueueName: 'inventory-reserve' });
    const { Sid: _sid, ...expected } = JSON.parse(queuePolicy('QUEUE', 'TOPIC')).Statement[0];
    const policies = Object.values(t.findResources('AWS::SQS::QueuePolicy', { Properties: { Queues: [{ Ref: queue }] } }));
    expect(policies).toHaveLength(1);
    expect(policies[0]!.Properties.PolicyDocument.Statement).toEqual([
      {
        ...expected,
        Resource: { 'Fn::GetAtt': [queue, 'Arn'] },
        Condition: { ArnEquals: { 'aws:SourceArn': { Ref: topic } } },
      },
    ]);
    // The job queue and DLQs take no messages from SNS.
    expect(Object.keys(t.findResources('AWS::SQS::QueuePolicy'))).toHaveLength(3);
  });

  it('subscribes each queue with raw delivery and the filter policy sqs-jobs computes, on message attributes', () => {
    const t = synth({ events: EVENTS });
    const topicOf = (name: string) => ({ Ref: idOf(t, 'AWS::SNS::Topic', { TopicName: name }) });
    const queueArn = (name: string) => ({ 'Fn::GetAtt': [idOf(t, 'AWS::SQS::Queue', { QueueName: name }), 'Arn'] });
    t.resourceCountIs('AWS::SNS::Subscription', 3);
    t.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'sqs',
      TopicArn: topicOf('order-placed'),
      Endpoint: queueArn('inventory-reserve'),
      RawMessageDelivery: true,
      FilterPolicy: Match.absent(),
      FilterPolicyScope: Match.absent(),
    });
    t.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'sqs',
      TopicArn: topicOf('order-placed'),
      Endpoint: queueArn('eu-invoice'),
      RawMessageDelivery: true,
      FilterPolicy: { region: ['eu'], amount: [{ numeric: ['>', 100] }] },
      FilterPolicyScope: 'MessageAttributes',
    });
    // A topic several events may share: the subscription also filters on the event's name.
    t.hasResourceProperties('AWS::SNS::Subscription', {
      TopicArn: topicOf('users'),
      Endpoint: queueArn('mail-welcome'),
      RawMessageDelivery: true,
      FilterPolicy: { 'sqsjobs-event': ['user.signed-up'] },
      FilterPolicyScope: 'MessageAttributes',
    });
  });

  it('wires the jobs a module exports as `events create` does: the same queue names and filter policies', () => {
    const orderPlaced = defineEvent({ name: 'order.placed', payload: z.object({ orderId: z.string(), region: z.string() }) });
    const shared = defineEvent({ name: 'user.signed-up', topic: 'users', payload: z.object({ userId: z.string() }) });
    const jobs = [
      defineJob({ name: 'reserve-stock', on: orderPlaced, handle: async () => {} }),
      defineJob({ name: 'eu.invoice', on: [orderPlaced, { region: ['eu'] }], handle: async () => {} }),
      defineJob({ name: 'mail:welcome', on: [shared, { 'sqsjobs-tenant': ['acme'] }], handle: async () => {} }),
      defineJob({ name: 'plain', args: z.object({}), handle: async () => {} }),
      orderPlaced,
    ];
    const events = eventSettingsOf(jobs);
    expect(events.map((e) => e.job)).toEqual(['reserve-stock', 'eu.invoice', 'mail:welcome']);
    const t = synth({ events });
    for (const job of jobs) {
      if (job.kind !== 'sqs-jobs/job' || job.on === undefined) continue;
      const queue = idOf(t, 'AWS::SQS::Queue', { QueueName: subscriberQueueNameFor(job.name) });
      const policy = filterPolicyOf(job.on);
      t.hasResourceProperties('AWS::SNS::Subscription', {
        TopicArn: { Ref: idOf(t, 'AWS::SNS::Topic', { TopicName: job.on.event.topic }) },
        Endpoint: { 'Fn::GetAtt': [queue, 'Arn'] },
        RawMessageDelivery: true,
        FilterPolicy: policy === undefined ? Match.absent() : JSON.parse(policy),
      });
    }
  });

  it('subscribes to a topic given by ARN without creating it', () => {
    const arn = 'arn:aws:sns:eu-west-1:123456789012:orders';
    const t = synth({ events: [{ event: 'order.placed', topicArn: arn, job: 'ship' }] });
    t.resourceCountIs('AWS::SNS::Topic', 0);
    t.hasResourceProperties('AWS::SNS::Subscription', {
      TopicArn: arn,
      RawMessageDelivery: true,
      FilterPolicy: { 'sqsjobs-event': ['order.placed'] },
    });
    t.hasResourceProperties('AWS::SQS::QueuePolicy', {
      PolicyDocument: { Statement: [Match.objectLike({ Condition: { ArnEquals: { 'aws:SourceArn': arn } } })] },
    });
  });

  it('alarms on each subscriber DLQ as on the job DLQ, sent to the alarm topic when there is one', () => {
    const t = synth({ events: EVENTS, alarmEmail: 'ops@example.com' });
    const alarmTopic = Object.keys(t.findResources('AWS::SNS::Topic')).find((id) => id.startsWith('JobsAlarmTopic'));
    const deadLetterAlarms = t.findResources('AWS::CloudWatch::Alarm', {
      Properties: { AlarmName: Match.stringLikeRegexp('-dead-letters$') },
    });
    expect(
      Object.values(deadLetterAlarms)
        .map((a) => a.Properties.AlarmName)
        .sort(),
    ).toEqual(['eu-invoice-dead-letters', 'inventory-reserve-dead-letters', 'jobs-dead-letters', 'mail-welcome-dead-letters']);
    for (const name of ['inventory-reserve', 'eu-invoice', 'mail-welcome']) {
      t.hasResourceProperties('AWS::CloudWatch::Alarm', {
        AlarmName: `${name}-dead-letters`,
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateNumberOfMessagesVisible',
        Dimensions: [
          { Name: 'QueueName', Value: { 'Fn::GetAtt': [idOf(t, 'AWS::SQS::Queue', { QueueName: `${name}-dlq` }), 'QueueName'] } },
        ],
        Statistic: 'Maximum',
        Threshold: 0,
        ComparisonOperator: 'GreaterThanThreshold',
        AlarmActions: [{ Ref: alarmTopic }],
      });
    }
    const quiet = synth({ events: EVENTS });
    quiet.hasResourceProperties('AWS::CloudWatch::Alarm', { AlarmName: 'eu-invoice-dead-letters', AlarmActions: Match.absent() });
  });

  it('lets the workers consume the subscriber queues and dead-letter to their DLQs, polls them, and scales on them', () => {
    const t = synth({ events: EVENTS });
    const arn = (name: string) => ({ 'Fn::GetAtt': [idOf(t, 'AWS::SQS::Queue', { QueueName: name }), 'Arn'] });
    const bySid = Object.fromEntries(taskRoleStatements(t).map((s) => [s.Sid, s]));
    expect(Object.keys(bySid).sort()).toEqual(['ConsumeJobQueue', 'DeadLetter', 'PublishJobMetrics']);
    expect(bySid.ConsumeJobQueue!.Resource).toEqual(['jobs', 'inventory-reserve', 'eu-invoice', 'mail-welcome'].map(arn));
    expect(bySid.DeadLetter!.Resource).toEqual(['jobs-dlq', 'inventory-reserve-dlq', 'eu-invoice-dlq', 'mail-welcome-dlq'].map(arn));
    const url = (name: string) => ({ Ref: idOf(t, 'AWS::SQS::Queue', { QueueName: name }) });
    t.hasResourceProperties('AWS::ECS::TaskDefinition', {
      ContainerDefinitions: [
        Match.objectLike({
          Command: Match.arrayWith(['--queue', url('jobs'), '--queue', url('inventory-reserve'), '--queue', url('eu-invoice')]),
          Environment: Match.arrayWith([{ Name: 'SQS_JOBS_QUEUE_URL', Value: url('jobs') }]),
        }),
      ],
    });
    expect(JSON.stringify(t.findResources('AWS::CloudWatch::Alarm'))).toContain('"Expression":"q0 + q1 + q2 + q3"');
  });

  it('with spillover: a subscriber queue weighs as the job queue, 4 against the spillover queue 1', () => {
    const command = JSON.stringify(synth({ spillover: true, events: EVENTS.slice(0, 1) }).findResources('AWS::ECS::TaskDefinition'));
    expect(command.match(/@4/g)).toHaveLength(2);
    expect(command.match(/@1/g)).toHaveLength(1);
  });

  it('gives publishers sns:Publish on the topics only (and ListTopics, to find them by name), and adds nothing without events', () => {
    const t = synth({ events: EVENTS });
    const publisher = Object.values(
      t.findResources('AWS::IAM::ManagedPolicy', { Properties: { Description: Match.stringLikeRegexp('publisher') } }),
    );
    expect(publisher).toHaveLength(1);
    expect(publisher[0]!.Properties.PolicyDocument.Statement).toEqual([
      {
        Sid: 'PublishEvents',
        Effect: 'Allow',
        Action: 'sns:Publish',
        Resource: ['order-placed', 'users'].map((name) => ({ Ref: idOf(t, 'AWS::SNS::Topic', { TopicName: name }) })),
      },
      { Sid: 'FindTopics', Effect: 'Allow', Action: 'sns:ListTopics', Resource: '*' },
    ]);
    const none = synth();
    none.resourceCountIs('AWS::SNS::Topic', 0);
    none.resourceCountIs('AWS::SNS::Subscription', 0);
    none.resourceCountIs('AWS::SQS::QueuePolicy', 0);
    // The producer policy only: no publisher policy without events.
    expect(Object.values(none.findResources('AWS::IAM::ManagedPolicy')).map((p) => p.Properties.Description)).toEqual([
      expect.stringMatching(/^sqs-jobs producer/),
    ]);
  });

  it('refuses what events create would refuse, and what the stack cannot deploy, saying which entry and why', () => {
    const refuse =
      (events: unknown[], more: Partial<DeploySettings> = {}) =>
      () =>
        resolveSettings({ ...more, events: events as EventSetting[] });
    expect(refuse([{ event: 'order placed', job: 'a' }])).toThrow(/events\.0\.event: must be 1-80 characters/);
    expect(refuse([{ event: 'a', job: 'x', topicArn: 'orders' }])).toThrow(/events\.0\.topicArn: must be an SNS topic ARN/);
    expect(refuse([{ event: 'a', job: 'x', topic: 'a', topicArn: 'arn:aws:sns:eu-west-1:123456789012:a' }])).toThrow(
      /events\.0\.topic: give topic or topicArn, not both/,
    );
    expect(refuse([{ event: 'a', job: 'x', filter: { region: ['eu'] } }])).toThrow(/events\.0: Unrecognized key: "filter"/);
    expect(refuse([{ event: 'a', job: 'x', filterPolicy: { region: [] } }])).toThrow(
      /events\.0\.filterPolicy\.region: must list at least one value/,
    );
    expect(refuse([{ event: 'a', topic: 'shared', job: 'x', filterPolicy: { a: [1], b: [1], c: [1], d: [1], e: [1] } }])).toThrow(
      /events\.0\.filterPolicy: .*names more than 5 attributes/,
    );
    expect(
      refuse([
        { event: 'a', job: 'x' },
        { event: 'b', job: 'x' },
      ]),
    ).toThrow(/events\.1\.job: "x" is listed twice/);
    expect(
      refuse([
        { event: 'a', job: 'a.b' },
        { event: 'a', job: 'a-b' },
      ]),
    ).toThrow(/events\.1\.job: its queue "a-b" would also be job "a\.b"'s queue: rename the job/);
    expect(refuse([{ event: 'a', job: 'jobs.dlq' }])).toThrow(/events\.0\.job: its queue "jobs-dlq" would also be the stack's DLQ/);
    expect(refuse([{ event: 'a', job: 'jobs-spill' }], { spillover: true })).toThrow(
      /its queue "jobs-spill" would also be the stack's queue/,
    );
    expect(refuse([{ event: 'a', job: 'x'.repeat(77) }])).toThrow(/events\.0\.job: its queue name "x{77}" is over 76 characters/);
    expect(
      refuse([
        { event: 'a', job: 'x' },
        { event: 'a', topic: 'other', job: 'y' },
      ]),
    ).toThrow(/events\.1\.topic: event "a" is on topic "a" in another entry: an event has one topic/);
    const seven = Array.from({ length: 7 }, (_, i) => ({ event: 'a', job: `j${i}` }));
    expect(refuse(seven, { spillover: true, tiers: 'strict' })).toThrow(
      /events: the workers would serve 11 queues .* at most 10 metrics: list at most 6 subscribers/,
    );
    expect(() => resolveSettings({ events: seven })).not.toThrow();
  });
});
