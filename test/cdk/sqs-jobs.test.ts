import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as iam from 'aws-cdk-lib/aws-iam';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS, resolveSettings, stopTimeoutSeconds, visibilityTimeoutSeconds } from '../../src/cdk/settings.js';
import { SqsJobs } from '../../src/cdk/index.js';
import { WORKER_DLQ_ACTIONS, WORKER_QUEUE_ACTIONS } from '../../src/cdk/permissions.js';
import { hasOutput, type Statement, stackWith, synth, taskRoleStatements } from './synth.js';

describe('SqsJobs', () => {
  it('wires the job queue to its DLQ with the redrive policy, and sets visibility to 2 × p99', () => {
    const t = synth({ maxReceiveCount: 7, p99ProcessingSeconds: 45 });
    t.hasResourceProperties('AWS::SQS::Queue', {
      QueueName: 'jobs',
      VisibilityTimeout: 90,
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('DeadLetterQueue'), 'Arn'] }, maxReceiveCount: 7 },
    });
    t.hasResourceProperties('AWS::SQS::Queue', { QueueName: 'jobs-dlq', MessageRetentionPeriod: 1_209_600 });
    expect(visibilityTimeoutSeconds({ p99ProcessingSeconds: 45 })).toBe(90);
  });

  it('with spillover: a spillover queue on the same DLQ, consumed by the worker at weight 1 against 4, in the IAM policy', () => {
    const t = synth({ spillover: true });
    t.hasResourceProperties('AWS::SQS::Queue', {
      QueueName: 'jobs-spill',
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('DeadLetterQueue'), 'Arn'] }, maxReceiveCount: 5 },
    });
    const consume = taskRoleStatements(t).find((st) => st.Sid === 'ConsumeJobQueue')!;
    expect(JSON.stringify(consume.Resource)).toMatch(/JobQueue.*SpilloverQueue/);
    const command = JSON.stringify(t.findResources('AWS::ECS::TaskDefinition'));
    expect(command).toContain('@4');
    expect(command).toContain('@1');
    hasOutput(t, 'SpilloverQueueUrl');
    expect(Object.keys(synth().findResources('AWS::SQS::Queue'))).toHaveLength(2); // off by default: queue and DLQ
  });

  it('with tiers: the -high and -low lanes on the same DLQ, served by the worker with --tiers, in the IAM policy and the scaling metric', () => {
    const t = synth({ tiers: 'weighted' });
    for (const name of ['jobs-high', 'jobs-low']) {
      t.hasResourceProperties('AWS::SQS::Queue', {
        QueueName: name,
        RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [Match.stringLikeRegexp('DeadLetterQueue'), 'Arn'] }, maxReceiveCount: 5 },
      });
    }
    const consume = taskRoleStatements(t).find((st) => st.Sid === 'ConsumeJobQueue')!;
    expect(JSON.stringify(consume.Resource)).toMatch(/JobQueue.*HighQueue.*LowQueue/);
    const command = JSON.stringify(t.findResources('AWS::ECS::TaskDefinition'));
    expect(command).toContain('"--tiers","weighted"');
    // Scaling counts what waits in every lane.
    expect(JSON.stringify(t.findResources('AWS::CloudWatch::Alarm'))).toContain('"Expression":"q0 + q1 + q2"');
    hasOutput(t, 'HighQueueUrl');
    hasOutput(t, 'LowQueueUrl');
    expect(() => synth({ tiers: true as never })).toThrow(/tiers: must be false, "strict" or "weighted"/);
  });

  it('with jobStore: an on-demand table with TTL, its name in the worker, item actions only for worker and producers', () => {
    const t = synth({ jobStore: { pointInTimeRecovery: true } });
    t.hasResourceProperties('AWS::DynamoDB::Table', {
      TableName: 'jobs-jobs',
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
      PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      // The due index of schedules and kept jobs, as `sqs-jobs store create` makes it.
      GlobalSecondaryIndexes: [
        {
          IndexName: 'schedules-due',
          KeySchema: [
            { AttributeName: 'schedShard', KeyType: 'HASH' },
            { AttributeName: 'schedDue', KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
      ],
    });
    const store = taskRoleStatements(t).find((st) => st.Sid === 'JobStore')!;
    expect([...store.Action].sort()).toEqual([
      'dynamodb:ConditionCheckItem',
      'dynamodb:GetItem',
      'dynamodb:PartiQLInsert',
      'dynamodb:PartiQLUpdate',
      'dynamodb:PutItem',
      'dynamodb:UpdateItem',
    ]);
    expect(JSON.stringify(store.Resource)).toMatch(/JobTable/);
    const producer = Object.values(t.findResources('AWS::IAM::ManagedPolicy'))[0]!; // the producer policy, the only one
    const statements = producer.Properties.PolicyDocument.Statement as { Sid: string; Action: string | string[] }[];
    expect(statements.find((st) => st.Sid === 'RecordWaiting')!.Action).toEqual([
      'dynamodb:UpdateItem',
      'dynamodb:PartiQLInsert',
      'dynamodb:PutItem',
      'dynamodb:GetItem',
      'dynamodb:DeleteItem',
    ]);
    expect(taskRoleStatements(t).find((st) => st.Sid === 'ScheduleTick')).toBeUndefined(); // schedules off: no Query, no DeleteItem
    expect(JSON.stringify(t.findResources('AWS::ECS::TaskDefinition'))).toContain('SQS_JOBS_JOB_TABLE');
    hasOutput(t, 'JobTableName');
    expect(Object.keys(synth().findResources('AWS::DynamoDB::Table'))).toHaveLength(0); // off by default
  });

  it('with jobStore.jobsList: the jobs list indexes as `store create` makes them; a number: the first that many, for one index a deploy', () => {
    const indexes = (settings: object) =>
      Object.values(synth({ jobStore: settings }).findResources('AWS::DynamoDB::Table'))[0]!.Properties.GlobalSecondaryIndexes as {
        IndexName: string;
        KeySchema: { AttributeName: string }[];
        Projection: { ProjectionType: string; NonKeyAttributes?: string[] };
      }[];
    const all = indexes({ jobsList: true });
    expect(all.map((i) => [i.IndexName, ...i.KeySchema.map((k) => k.AttributeName)])).toEqual([
      ['schedules-due', 'schedShard', 'schedDue'],
      ['jobs-by-state', 'lsState', 'lsAt'],
      ['jobs-by-job', 'lsJob', 'lsAt'],
      ['jobs-by-tenant', 'lsTenant', 'lsAt'],
    ]);
    expect(all[1]!.Projection).toEqual({
      ProjectionType: 'INCLUDE',
      NonKeyAttributes: ['jobName', 'tenant', 'state', 'attempt', 'lsSaid'],
    });
    expect(indexes({ jobsList: 1 }).map((i) => i.IndexName)).toEqual(['schedules-due', 'jobs-by-state']);
    expect(indexes({}).map((i) => i.IndexName)).toEqual(['schedules-due']); // off by default
  });

  it('with jobStore.schedules: the workers tick (--schedules), with Query on the due index only and DeleteItem on the table', () => {
    const t = synth({ jobStore: { schedules: true } });
    const tick = taskRoleStatements(t).find((st) => st.Sid === 'ScheduleTick')!;
    expect(tick.Action).toEqual(['dynamodb:Query', 'dynamodb:DeleteItem']);
    expect(JSON.stringify(tick.Resource)).toMatch(/index\/schedules-due/);
    expect(JSON.stringify(t.findResources('AWS::ECS::TaskDefinition'))).toContain('"--schedules"');
    expect(JSON.stringify(synth({ jobStore: {} }).findResources('AWS::ECS::TaskDefinition'))).not.toContain('--schedules');
  });

  it("with jobStore.schedules: each deploy runs `schedules sync` as the app, a one-off task of the workers' own definition", () => {
    const t = synth({ jobStore: { schedules: true }, queueName: 'billing', jobsModule: 'dist/jobs.js' });
    const syncs = Object.values(t.findResources('Custom::AWS'));
    expect(syncs).toHaveLength(1);
    const create = JSON.stringify(syncs[0]!.Properties.Create);
    expect(create).toContain('runTask');
    expect(create).toContain(
      '\\"command\\":[\\"schedules\\",\\"sync\\",\\"--jobs\\",\\"dist/jobs.js\\",\\"--app\\",\\"billing\\",\\"--allow-empty\\"]',
    );
    expect(create).toContain('sqs-jobs-schedule-sync');
    expect(create).toContain('\\"outputPaths\\":[\\"tasks.0.taskArn\\"]'); // a custom resource's answer holds 4 KB
    // Started after the workers' role has its grants (the table's among them).
    const dependsOn = JSON.stringify(syncs[0]!.DependsOn);
    expect(dependsOn).toMatch(/TaskRoleDefaultPolicy/);
    expect(JSON.stringify(syncs[0]!.Properties.Update)).toBe(JSON.stringify(syncs[0]!.Properties.Create));
    // Allowed to start that task and hand it the workers' roles, nothing more.
    const policies = Object.values(t.findResources('AWS::IAM::Policy')).filter((p) => JSON.stringify(p).includes('ecs:RunTask'));
    expect(policies).toHaveLength(1);
    const actions = (policies[0]!.Properties.PolicyDocument.Statement as Statement[]).flatMap((st) => st.Action);
    expect(actions.sort()).toEqual(['ecs:RunTask', 'iam:PassRole']);
    expect(Object.keys(synth({ jobStore: {} }).findResources('Custom::AWS'))).toHaveLength(0);
  });

  it('alarms on any dead letter and on the oldest message passing the SLA', () => {
    const t = synth({ oldestMessageSlaSeconds: 900, alarmEmail: 'ops@example.com' });
    t.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Namespace: 'AWS/SQS',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [Match.stringLikeRegexp('DeadLetterQueue'), 'QueueName'] } }],
      Threshold: 0,
      ComparisonOperator: 'GreaterThanThreshold',
      AlarmActions: Match.anyValue(),
    });
    t.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateAgeOfOldestMessage',
      Threshold: 900,
      ComparisonOperator: 'GreaterThanThreshold',
      AlarmActions: Match.anyValue(),
    });
    t.hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.com' });
  });

  it('alarms as the playbook says: a backlog over what the fleet clears within the SLA for 5 minutes, and a message near its retention in the queue and in the DLQ', () => {
    const t = synth({ maxTasks: 4, concurrency: 5, p99ProcessingSeconds: 20, oldestMessageSlaSeconds: 300, alarmEmail: 'ops@example.com' });
    const alarms = alarmsByName(t);
    expect(Object.keys(alarms).sort()).toEqual([
      'jobs-backlog',
      'jobs-dead-letters',
      'jobs-dlq-retention',
      'jobs-oldest-message',
      'jobs-retention',
    ]);
    // 4 tasks × 5 handlers, 20 s a job: 300 in the 300-s SLA.
    expect(alarms['jobs-backlog']).toMatchObject({
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Threshold: 300,
      EvaluationPeriods: 5,
    });
    expect(alarms['jobs-backlog']!.Dimensions).toEqual([
      { Name: 'QueueName', Value: { 'Fn::GetAtt': [expect.stringMatching(/JobQueue/), 'QueueName'] } },
    ]);
    // The queue keeps a message 4 days: alarm a day before; the DLQ keeps 14 days from the first enqueue, and the message may have waited 4 in the queue.
    expect(alarms['jobs-retention']).toMatchObject({ MetricName: 'ApproximateAgeOfOldestMessage', Threshold: 3 * DAY });
    expect(alarms['jobs-dlq-retention']).toMatchObject({ MetricName: 'ApproximateAgeOfOldestMessage', Threshold: 9 * DAY });
    expect(alarms['jobs-dlq-retention']!.Dimensions).toEqual([
      { Name: 'QueueName', Value: { 'Fn::GetAtt': [expect.stringMatching(/DeadLetterQueue/), 'QueueName'] } },
    ]);
    for (const [name, alarm] of Object.entries(alarms)) {
      expect(alarm.AlarmActions, name).toHaveLength(1); // each notifies the topic
      expect(alarm.AlarmDescription, name).toMatch(/\. [A-Z`]/); // what it means, then what to do
    }
    expect(alarmsByName(synth({ backlogAlarmMessages: 50, retentionWarningSeconds: 2 * DAY }))).toMatchObject({
      'jobs-backlog': { Threshold: 50 },
      'jobs-retention': { Threshold: 2 * DAY },
      'jobs-dlq-retention': { Threshold: 8 * DAY },
    });
  });

  it('with tiers: each lane’s oldest message against its own SLA, the backlog summed and the retention the oldest over the lanes', () => {
    const alarms = alarmsByName(synth({ tiers: 'strict', oldestMessageSlaSeconds: 900 }));
    expect(alarms['jobs-high-oldest-message']).toMatchObject({ MetricName: 'ApproximateAgeOfOldestMessage', Threshold: 90 });
    expect(alarms['jobs-oldest-message']).toMatchObject({ Threshold: 900 });
    expect(alarms['jobs-low-oldest-message']).toMatchObject({ Threshold: 5400 });
    expect(JSON.stringify(alarms['jobs-high-oldest-message']!.Dimensions)).toMatch(/HighQueue/);
    expect(JSON.stringify(alarms['jobs-low-oldest-message']!.Dimensions)).toMatch(/LowQueue/);
    expect(JSON.stringify(alarms['jobs-backlog']!.Metrics)).toContain('"Expression":"q0 + q1 + q2"');
    expect(JSON.stringify(alarms['jobs-retention']!.Metrics)).toContain('"Expression":"MAX([q0, q1, q2])"');
    const given = alarmsByName(synth({ tiers: 'weighted', laneSlaSeconds: { high: 60, low: 7200 } }));
    expect([given['jobs-high-oldest-message']!.Threshold, given['jobs-low-oldest-message']!.Threshold]).toEqual([60, 7200]);
  });

  it('refuses alarm thresholds that cannot work, naming the setting and its rule', () => {
    expect(() => synth({ laneSlaSeconds: { high: 60 } })).toThrow(/laneSlaSeconds: needs tiers/);
    expect(() => synth({ tiers: 'strict', laneSlaSeconds: { high: 900 } })).toThrow(
      /laneSlaSeconds\.high: must be <= oldestMessageSlaSeconds \(600\)/,
    );
    expect(() => synth({ tiers: 'strict', laneSlaSeconds: { low: 300 } })).toThrow(
      /laneSlaSeconds\.low: must be >= oldestMessageSlaSeconds \(600\)/,
    );
    expect(() => synth({ messageRetentionSeconds: 3600, oldestMessageSlaSeconds: 600, retentionWarningSeconds: 3000 })).toThrow(
      /retentionWarningSeconds: must leave messageRetentionSeconds \(3600\) minus it \(3000\) above the longest oldest-message SLA \(600\); it leaves 600/,
    );
    expect(alarmsByName(synth({ messageRetentionSeconds: DAY }))['jobs-retention']!.Threshold).toBe(DAY - DAY / 4);
    expect(() => synth({ messageRetentionSeconds: 14 * DAY })).toThrow(
      /messageRetentionSeconds: plus retentionWarningSeconds \(86400\) must stay an hour below the DLQ's 1209600 s/,
    );
    expect(() => synth({ backlogAlarmMessages: 0 })).toThrow(/backlogAlarmMessages/);
  });

  it('gives the task role exactly the SQS and CloudWatch actions the worker uses, on these queues only', () => {
    const statements = taskRoleStatements(synth());
    const actions = statements.flatMap((s) => (Array.isArray(s.Action) ? s.Action : [s.Action]));
    expect(actions.every((a) => !a.includes('*'))).toBe(true);
    const bySid = Object.fromEntries(statements.map((s) => [s.Sid, s]));
    expect(new Set(bySid.ConsumeJobQueue!.Action)).toEqual(new Set(WORKER_QUEUE_ACTIONS));
    expect(bySid.ConsumeJobQueue!.Resource).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/^JobsJobQueue/), 'Arn'] });
    expect(new Set(bySid.DeadLetter!.Action)).toEqual(new Set(WORKER_DLQ_ACTIONS));
    expect(bySid.DeadLetter!.Resource).toEqual({ 'Fn::GetAtt': [expect.stringMatching(/^JobsDeadLetterQueue/), 'Arn'] });
    expect(bySid.PublishJobMetrics).toMatchObject({
      Action: 'cloudwatch:PutMetricData',
      Condition: { StringEquals: { 'cloudwatch:namespace': 'SqsJobs' } },
    });
    expect(Object.keys(bySid).sort()).toEqual(['ConsumeJobQueue', 'DeadLetter', 'PublishJobMetrics']);
  });

  it('grants no CloudWatch action when metrics go out as EMF log lines', () => {
    const statements = taskRoleStatements(synth({ metrics: 'emf' }));
    expect(statements.map((s) => s.Sid).sort()).toEqual(['ConsumeJobQueue', 'DeadLetter']);
  });

  it('runs sqs-jobs worker with a stop timeout longer than its shutdown deadline, under an init', () => {
    const t = synth({ shutdownTimeoutSeconds: 45, waitTimeSeconds: 20 });
    t.hasResourceProperties('AWS::ECS::TaskDefinition', {
      RequiresCompatibilities: ['FARGATE'],
      ContainerDefinitions: [
        Match.objectLike({
          Command: [
            'worker',
            '--jobs',
            DEFAULT_SETTINGS.jobsModule,
            '--concurrency',
            '10',
            '--visibility-timeout',
            '60',
            '--wait-time',
            '20',
            '--shutdown-timeout-ms',
            '45000',
          ],
          StopTimeout: 75,
          LinuxParameters: { InitProcessEnabled: true, Capabilities: Match.anyValue() },
          ReadonlyRootFilesystem: true,
          Environment: Match.arrayWith([
            Match.objectLike({ Name: 'SQS_JOBS_QUEUE_URL' }),
            Match.objectLike({ Name: 'SQS_JOBS_MEMCACHED' }),
          ]),
        }),
      ],
    });
    expect(stopTimeoutSeconds({ shutdownTimeoutSeconds: 45, waitTimeSeconds: 20 })).toBeGreaterThan(45);
  });

  it('refuses settings whose stop timeout Fargate cannot give', () => {
    expect(() => resolveSettings({ shutdownTimeoutSeconds: 100 })).toThrow(/must be <= 120 \(the Fargate stopTimeout limit\); it is 130/);
    expect(() => resolveSettings({ minTasks: 0 })).toThrow(/minTasks: must be >= 1/);
  });

  it('scales in steps on queue depth, never below one task', () => {
    const t = synth({ minTasks: 2, maxTasks: 20 });
    t.hasResourceProperties('AWS::ApplicationAutoScaling::ScalableTarget', { MinCapacity: 2, MaxCapacity: 20 });
    const policies = Object.values(t.findResources('AWS::ApplicationAutoScaling::ScalingPolicy'));
    expect(policies.length).toBe(2);
    for (const p of policies) expect(p.Properties.PolicyType).toBe('StepScaling');
    const adjustments = policies.flatMap((p) =>
      p.Properties.StepScalingPolicyConfiguration.StepAdjustments.map((a: { ScalingAdjustment: number }) => a.ScalingAdjustment),
    );
    expect(adjustments.sort((a: number, b: number) => a - b)).toEqual([-1, 1, 2, 4]);
    t.hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: { 'Fn::GetAtt': [Match.stringLikeRegexp('^JobsJobQueue'), 'QueueName'] } }],
    });
  });

  it('creates memcached that only the workers reach, or uses a given endpoint', () => {
    const t = synth();
    t.hasResourceProperties('AWS::ElastiCache::CacheCluster', { Engine: 'memcached', NumCacheNodes: 1 });
    t.hasResourceProperties('AWS::EC2::SecurityGroupIngress', {
      IpProtocol: 'tcp',
      FromPort: 11211,
      ToPort: 11211,
      SourceSecurityGroupId: { 'Fn::GetAtt': [Match.stringLikeRegexp('WorkerSecurityGroup'), 'GroupId'] },
    });
    const given = synth({ memcached: { endpoint: 'cache.internal:11211' } });
    given.resourceCountIs('AWS::ElastiCache::CacheCluster', 0);
    given.hasResourceProperties('AWS::ECS::TaskDefinition', {
      ContainerDefinitions: [
        Match.objectLike({ Environment: Match.arrayWith([{ Name: 'SQS_JOBS_MEMCACHED', Value: 'cache.internal:11211' }]) }),
      ],
    });
  });

  it('creates memcached with in-transit encryption when asked, and gives the workers tls://', () => {
    const off = synth();
    expect(JSON.stringify(off.findResources('AWS::ElastiCache::CacheCluster'))).not.toContain('TransitEncryptionEnabled');
    const { stack, jobs } = stackWith({ memcached: { create: true, nodeType: 'cache.t4g.micro', transitEncryption: true } });
    const t = Template.fromStack(stack);
    t.hasResourceProperties('AWS::ElastiCache::CacheCluster', { Engine: 'memcached', NumCacheNodes: 1, TransitEncryptionEnabled: true });
    const env = t.findResources('AWS::ECS::TaskDefinition');
    const memcached = Object.values(env)[0]!.Properties.ContainerDefinitions[0].Environment.find(
      (e: { Name: string }) => e.Name === 'SQS_JOBS_MEMCACHED',
    );
    // tls:// then the node's configuration endpoint, resolved at deploy time.
    expect(memcached.Value['Fn::Join'][1][0]).toBe('tls://');
    expect(JSON.stringify(memcached.Value)).toContain('ConfigurationEndpoint.Address');
    expect(stack.resolve(jobs.memcachedEndpoint)['Fn::Join'][1][0]).toBe('tls://');
  });

  it('takes a given tls://host:port endpoint as it is, and refuses other schemes', () => {
    const given = synth({ memcached: { endpoint: 'tls://cache.internal:11211' } });
    given.resourceCountIs('AWS::ElastiCache::CacheCluster', 0);
    given.hasResourceProperties('AWS::ECS::TaskDefinition', {
      ContainerDefinitions: [
        Match.objectLike({ Environment: Match.arrayWith([{ Name: 'SQS_JOBS_MEMCACHED', Value: 'tls://cache.internal:11211' }]) }),
      ],
    });
    expect(() => synth({ memcached: { endpoint: 'ssl://cache.internal:11211' } })).toThrow(
      /memcached.endpoint: must be host:port, or tls:\/\/host:port/,
    );
  });

  it('puts enqueue vs dequeue, depth and per-job wait percentiles on a dashboard', () => {
    const t = synth();
    const body = JSON.stringify(Object.values(t.findResources('AWS::CloudWatch::Dashboard'))[0]!.Properties.DashboardBody);
    expect(body).toContain('NumberOfMessagesSent');
    expect(body).toContain('NumberOfMessagesDeleted');
    expect(body).toContain('ApproximateNumberOfMessagesVisible');
    expect(body).toContain('MetricName=\\\\\\"WaitTime\\\\\\"');
    expect(body).toContain("'p99'");
  });
});

describe('SqsJobs as a construct in your own stack', () => {
  it('grantEnqueue gives a producer send on the queue, its spillover queue and lanes, and the waiting record, nothing else', () => {
    const { stack, jobs } = stackWith({ spillover: true, tiers: 'strict', jobStore: {} });
    const api = new iam.Role(stack, 'ApiRole', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
    jobs.grantEnqueue(api);
    const t = Template.fromStack(stack);
    const policy = Object.values(t.findResources('AWS::IAM::Policy')).find((p) => JSON.stringify(p.Properties.Roles).includes('ApiRole'))!;
    const statements = policy.Properties.PolicyDocument.Statement as { Action: string[] | string; Resource: unknown }[];
    expect(statements).toHaveLength(2);
    const send = statements.find((st) => JSON.stringify(st.Action).includes('sqs:SendMessage'))!;
    expect(send.Action).toEqual(['sqs:SendMessage', 'sqs:GetQueueAttributes']);
    expect(JSON.stringify(send.Resource)).toMatch(/JobsJobQueue.*JobsSpilloverQueue.*JobsHighQueue.*JobsLowQueue/);
    expect(statements.find((st) => st !== send)).toMatchObject({
      Action: ['dynamodb:UpdateItem', 'dynamodb:PartiQLInsert', 'dynamodb:PutItem', 'dynamodb:GetItem', 'dynamodb:DeleteItem'],
    });
  });

  it('runs in a cluster and VPC you give, making neither', () => {
    const stack = new Stack(new App(), 'Shared');
    const vpc = new ec2.Vpc(stack, 'SharedVpc', { maxAzs: 2 });
    const cluster = new ecs.Cluster(stack, 'SharedCluster', { vpc });
    new SqsJobs(stack, 'Jobs', { image: ecs.ContainerImage.fromRegistry('example.invalid/w:1'), cluster });
    const t = Template.fromStack(stack);
    t.resourceCountIs('AWS::EC2::VPC', 1);
    t.resourceCountIs('AWS::ECS::Cluster', 1);
    t.hasResourceProperties('AWS::ECS::Service', { Cluster: { Ref: Match.stringLikeRegexp('^SharedCluster') } });
  });

  it('two of them live side by side in one stack, each with its own queues, table, service and alarms', () => {
    const stack = new Stack(new App(), 'Two');
    const image = ecs.ContainerImage.fromRegistry('example.invalid/w:1');
    const vpc = new ec2.Vpc(stack, 'Vpc', { maxAzs: 2 });
    new SqsJobs(stack, 'Reports', { image, vpc, queueName: 'reports', jobStore: {} });
    new SqsJobs(stack, 'Mail', { image, vpc, queueName: 'mail', memcached: { endpoint: 'cache.internal:11211' } });
    const t = Template.fromStack(stack);
    const names = Object.values(t.findResources('AWS::SQS::Queue')).map((q) => q.Properties.QueueName as string);
    expect(names.sort()).toEqual(['mail', 'mail-dlq', 'reports', 'reports-dlq']);
    t.resourceCountIs('AWS::ECS::Service', 2);
    t.resourceCountIs('AWS::DynamoDB::Table', 1);
    t.resourceCountIs('AWS::ElastiCache::CacheCluster', 1);
  });

  it('grantEnqueue from two of them onto one role: both queues, no statement id twice', () => {
    const stack = new Stack(new App(), 'Grants');
    const image = ecs.ContainerImage.fromRegistry('example.invalid/w:1');
    const vpc = new ec2.Vpc(stack, 'Vpc', { maxAzs: 2 });
    const a = new SqsJobs(stack, 'A', { image, vpc, queueName: 'a', memcached: { endpoint: 'cache.internal:11211' } });
    const b = new SqsJobs(stack, 'B', { image, vpc, queueName: 'b', memcached: { endpoint: 'cache.internal:11211' }, jobStore: {} });
    const api = new iam.Role(stack, 'ApiRole', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
    a.grantEnqueue(api);
    b.grantEnqueue(api);
    const policy = Object.values(Template.fromStack(stack).findResources('AWS::IAM::Policy')).find((p) =>
      JSON.stringify(p.Properties.Roles).includes('ApiRole'),
    )!;
    const statements = policy.Properties.PolicyDocument.Statement as { Sid?: string; Action: string | string[]; Resource: unknown }[];
    const sids = statements.map((st) => st.Sid).filter((sid) => sid !== undefined);
    expect(new Set(sids).size).toBe(sids.length);
    expect(JSON.stringify(statements)).toMatch(/AJobQueue.*BJobQueue|BJobQueue.*AJobQueue/s);
    expect(JSON.stringify(statements)).toContain('BJobTable');
  });

  it('keeps the DLQ when the stack is deleted, and lets producers reach the memcached it makes', () => {
    const { stack, jobs } = stackWith();
    const producers = new ec2.SecurityGroup(stack, 'Producers', { vpc: jobs.service!.cluster.vpc });
    jobs.memcachedSecurityGroup!.addIngressRule(producers, ec2.Port.tcp(11211), 'producers: cancel and admission');
    const t = Template.fromStack(stack);
    t.hasResource('AWS::SQS::Queue', { Properties: { QueueName: 'jobs-dlq' }, DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
    t.hasResource('AWS::SQS::Queue', { Properties: { QueueName: 'jobs' }, DeletionPolicy: 'Delete' });
    const rules = Object.values(t.findResources('AWS::EC2::SecurityGroupIngress'));
    expect(rules.map((r) => JSON.stringify(r.Properties.SourceSecurityGroupId))).toEqual(
      expect.arrayContaining([expect.stringContaining('WorkerSecurityGroup'), expect.stringContaining('Producers')]),
    );
    expect(jobs.memcachedEndpoint).toMatch(/:/);
    const given = stackWith({ memcached: { endpoint: 'cache.internal:11211' } }).jobs;
    expect(given.memcachedSecurityGroup).toBeUndefined();
    expect(given.memcachedEndpoint).toBe('cache.internal:11211');
  });

  it('a setting given as undefined keeps its default', () => {
    expect(resolveSettings({ queueName: undefined, concurrency: undefined }).queueName).toBe(DEFAULT_SETTINGS.queueName);
  });

  it('refuses bad settings at synth, naming the setting and the rule', () => {
    const image = ecs.ContainerImage.fromRegistry('example.invalid/w:1');
    const stack = new Stack(new App(), 'Bad');
    expect(() => new SqsJobs(stack, 'A', { image, queueName: 'has space' })).toThrow(/queueName: must be 1-75 letters, digits, - or _/);
    expect(() => new SqsJobs(stack, 'B', { image, cpu: 300 as never })).toThrow(/cpu:/);
    expect(() => new SqsJobs(stack, 'C', { image, minTasks: 3, maxTasks: 2 })).toThrow(/maxTasks: must be >= minTasks/);
  });
});

const DAY = 24 * 3600;

type AlarmProps = {
  MetricName?: string;
  Threshold: number;
  EvaluationPeriods: number;
  Dimensions?: unknown;
  Metrics?: unknown;
  AlarmActions?: unknown[];
  AlarmDescription: string;
};

/** The stack's alarms by name. */
function alarmsByName(t: Template): Record<string, AlarmProps> {
  return Object.fromEntries(
    Object.values(t.findResources('AWS::CloudWatch::Alarm'))
      .map((r) => r.Properties as AlarmProps & { AlarmName?: string })
      .filter((p) => typeof p.AlarmName === 'string')
      .map((p) => [p.AlarmName!, p]),
  );
}
