import { fileURLToPath } from 'node:url';
import { CfnOutput, Duration, Stack, type StackProps } from 'aws-cdk-lib';
import * as appscaling from 'aws-cdk-lib/aws-applicationautoscaling';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cwActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as elasticache from 'aws-cdk-lib/aws-elasticache';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { SubscriberQueues } from './events.js';
import { DLQ_RETENTION_SECONDS, queueSpec, stopTimeoutSeconds, type DeploySettings } from './settings.js';

export interface SqsJobsWorkerStackProps extends StackProps {
  readonly settings: DeploySettings;
  /** The worker image; default: built from the repository's Dockerfile at deploy time. */
  readonly image?: ecs.ContainerImage;
  /** An existing VPC; default: a new one with two AZs and one NAT gateway. */
  readonly vpc?: ec2.IVpc;
}

const REPO_ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/**
 * The SQS actions the worker calls on the queues it consumes, and nothing else. Batch calls are
 * authorised by their single forms. SendMessage: a message with no receive left is re-sent rather
 * than handed back, a job over its tenant's cap is re-sent later, and ctx.fanOut sends children and
 * completions to the queue it consumes.
 */
export const WORKER_QUEUE_ACTIONS = [
  'sqs:ReceiveMessage',
  'sqs:DeleteMessage',
  'sqs:ChangeMessageVisibility',
  'sqs:GetQueueAttributes',
  'sqs:SendMessage',
];
export const WORKER_DLQ_ACTIONS = ['sqs:SendMessage', 'sqs:GetQueueUrl'];
/**
 * The job store's item actions: the worker reads and updates records and counts fan-out children
 * (TransactWriteItems is authorised by the PutItem and UpdateItem inside it); a producer only
 * records `waiting`. No Scan, Query, DeleteItem or table actions.
 */
// PartiQLUpdate: state changes made together go out as one BatchExecuteStatement of UPDATEs.
export const WORKER_STORE_ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:UpdateItem',
  'dynamodb:PutItem',
  'dynamodb:ConditionCheckItem',
  'dynamodb:PartiQLUpdate',
];
export const PRODUCER_STORE_ACTIONS = ['dynamodb:UpdateItem'];

/** A job queue with its DLQ, alarms, a dashboard, and an autoscaled Fargate service running `sqs-jobs worker`. */
export class SqsJobsWorkerStack extends Stack {
  readonly queue: sqs.Queue;
  /** With `spillover`: tenant fairness's spillover queue (a producer sends a tenant's excess there). */
  readonly spilloverQueue: sqs.Queue | undefined;
  /** With `tiers`: the high and low tiers' lanes (the queue is the normal tier's). */
  readonly lanes: { readonly high: sqs.Queue; readonly low: sqs.Queue } | undefined;
  readonly deadLetterQueue: sqs.Queue;
  /** With `events`: the events' topics, and each subscriber job's queue, DLQ and alarm (as `sqs-jobs events create`). */
  readonly events: SubscriberQueues;
  /** With `jobStore`: the job status table (partition key `pk`, TTL on `expiresAt`). */
  readonly jobTable: dynamodb.Table | undefined;
  readonly service: ecs.FargateService;

  constructor(scope: Construct, id: string, props: SqsJobsWorkerStackProps) {
    super(scope, id, props);
    const s = props.settings;
    const spec = queueSpec(s);

    // Queues: the same attributes `npm run infra:local` gives the local stack.
    this.deadLetterQueue = new sqs.Queue(this, 'DeadLetterQueue', {
      queueName: `${spec.name}-dlq`,
      retentionPeriod: Duration.seconds(DLQ_RETENTION_SECONDS),
    });
    this.queue = new sqs.Queue(this, 'JobQueue', {
      queueName: spec.name,
      visibilityTimeout: Duration.seconds(spec.visibilityTimeout),
      retentionPeriod: Duration.seconds(spec.messageRetentionSeconds),
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: spec.maxReceiveCount },
    });
    // The spillover queue and the tiers' lanes mirror the queue: its settings and its DLQ.
    const beside = (id: string, queueName: string) =>
      new sqs.Queue(this, id, {
        queueName,
        visibilityTimeout: Duration.seconds(spec.visibilityTimeout),
        retentionPeriod: Duration.seconds(spec.messageRetentionSeconds),
        deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: spec.maxReceiveCount },
      });
    this.spilloverQueue = s.spillover ? beside('SpilloverQueue', `${spec.name}-spill`) : undefined;
    this.lanes = s.tiers ? { high: beside('HighQueue', `${spec.name}-high`), low: beside('LowQueue', `${spec.name}-low`) } : undefined;
    const consumed = [
      this.queue,
      ...(this.spilloverQueue ? [this.spilloverQueue] : []),
      ...(this.lanes ? [this.lanes.high, this.lanes.low] : []),
    ];
    // Subscriber jobs' queues, served by the same workers (the jobs module exports their jobs).
    this.events = new SubscriberQueues(this, 'Events', { events: s.events, queue: spec });
    const subscriberQueues = this.events.subscribers.map((sub) => sub.queue);
    const served = [...consumed, ...subscriberQueues];
    this.jobTable = s.jobStore
      ? new dynamodb.Table(this, 'JobTable', {
          tableName: `${spec.name}-jobs`,
          partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
          billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
          timeToLiveAttribute: 'expiresAt',
          pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: s.jobStore.pointInTimeRecovery },
        })
      : undefined;

    this.#alarms(s);
    this.#dashboard(s);

    const vpc = props.vpc ?? new ec2.Vpc(this, 'Vpc', { maxAzs: 2, natGateways: 1 });
    const workerSecurityGroup = new ec2.SecurityGroup(this, 'WorkerSecurityGroup', { vpc, description: 'sqs-jobs workers' });
    const memcached = 'endpoint' in s.memcached ? s.memcached.endpoint : this.#memcached(vpc, workerSecurityGroup, s.memcached.nodeType);

    const taskRole = new iam.Role(this, 'WorkerTaskRole', {
      assumedBy: new iam.ServicePrincipal('ecs-tasks.amazonaws.com'),
      description: 'sqs-jobs worker: consume the job queue, dead-letter to its DLQ, publish job metrics',
    });
    taskRole.addToPolicy(
      new iam.PolicyStatement({ sid: 'ConsumeJobQueue', actions: WORKER_QUEUE_ACTIONS, resources: served.map((q) => q.queueArn) }),
    );
    taskRole.addToPolicy(
      new iam.PolicyStatement({
        sid: 'DeadLetter',
        actions: WORKER_DLQ_ACTIONS,
        resources: [this.deadLetterQueue, ...this.events.subscribers.map((sub) => sub.deadLetterQueue)].map((q) => q.queueArn),
      }),
    );
    if (this.jobTable) {
      taskRole.addToPolicy(
        new iam.PolicyStatement({ sid: 'JobStore', actions: WORKER_STORE_ACTIONS, resources: [this.jobTable.tableArn] }),
      );
      // Producers (your services) attach this to record jobs they enqueue with `track: true`; fan-out
      // children are sent by the worker, which sends to the queue it consumes.
      new iam.ManagedPolicy(this, 'ProducerPolicy', {
        description: 'sqs-jobs producer: send jobs to the queue (and its spillover queue and lanes), record tracked jobs as waiting',
        statements: [
          new iam.PolicyStatement({
            sid: 'SendJobs',
            actions: ['sqs:SendMessage', 'sqs:GetQueueAttributes'],
            resources: consumed.map((q) => q.queueArn),
          }),
          new iam.PolicyStatement({ sid: 'RecordWaiting', actions: PRODUCER_STORE_ACTIONS, resources: [this.jobTable.tableArn] }),
        ],
      });
    }
    if (s.metrics === 'cloudwatch') {
      // PutMetricData has no resource type; the condition pins it to the job metrics namespace.
      taskRole.addToPolicy(
        new iam.PolicyStatement({
          sid: 'PublishJobMetrics',
          actions: ['cloudwatch:PutMetricData'],
          resources: ['*'],
          conditions: { StringEquals: { 'cloudwatch:namespace': s.metricsNamespace } },
        }),
      );
    }

    const mainWeight = this.spilloverQueue ? '@4' : '';
    const taskDefinition = new ecs.FargateTaskDefinition(this, 'WorkerTask', { cpu: s.cpu, memoryLimitMiB: s.memoryMiB, taskRole });
    taskDefinition.addContainer('worker', {
      image: props.image ?? ecs.ContainerImage.fromAsset(REPO_ROOT),
      command: [
        'worker',
        '--jobs',
        s.jobsModule,
        '--concurrency',
        String(s.concurrency),
        '--visibility-timeout',
        String(spec.visibilityTimeout),
        '--wait-time',
        String(s.waitTimeSeconds),
        '--shutdown-timeout-ms',
        String(s.shutdownTimeoutSeconds * 1000),
        // With a spillover queue the worker polls both, free slots going 4 : 1 to the main queue; a
        // subscriber's queue weighs as the main queue.
        ...(this.spilloverQueue || subscriberQueues.length > 0
          ? [
              '--queue',
              `${this.queue.queueUrl}${mainWeight}`,
              ...(this.spilloverQueue ? ['--queue', `${this.spilloverQueue.queueUrl}@1`] : []),
              ...subscriberQueues.flatMap((q) => ['--queue', `${q.queueUrl}${mainWeight}`]),
            ]
          : []),
        // With tiers it also polls the queue's -high and -low lanes.
        ...(s.tiers ? ['--tiers', s.tiers] : []),
      ],
      environment: {
        SQS_JOBS_QUEUE_URL: this.queue.queueUrl,
        SQS_JOBS_MEMCACHED: memcached,
        SQS_JOBS_METRICS: s.metrics,
        SQS_JOBS_METRICS_NAMESPACE: s.metricsNamespace,
        ...(this.jobTable ? { SQS_JOBS_JOB_TABLE: this.jobTable.tableName } : {}),
        AWS_REGION: this.region,
      },
      logging: ecs.LogDrivers.awsLogs({ streamPrefix: 'worker', logRetention: logs.RetentionDays.ONE_MONTH }),
      // SIGTERM → the worker's graceful stop; SIGKILL only after this.
      stopTimeout: Duration.seconds(stopTimeoutSeconds(s)),
      // A minimal init as PID 1 forwards signals and reaps children.
      linuxParameters: new ecs.LinuxParameters(this, 'WorkerLinux', { initProcessEnabled: true }),
      readonlyRootFilesystem: true,
    });

    const cluster = new ecs.Cluster(this, 'Cluster', { vpc });
    this.service = new ecs.FargateService(this, 'WorkerService', {
      cluster,
      taskDefinition,
      desiredCount: s.minTasks,
      securityGroups: [workerSecurityGroup],
      vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
      minHealthyPercent: 100,
      maxHealthyPercent: 200,
      circuitBreaker: { rollback: true },
    });

    // Step scaling on the backlog: never below minTasks, more tasks the deeper the queue.
    const scaling = this.service.autoScaleTaskCount({ minCapacity: s.minTasks, maxCapacity: s.maxTasks });
    const depth = (q: sqs.Queue) => q.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), statistic: 'Maximum' });
    scaling.scaleOnMetric('QueueDepthScaling', {
      metric:
        served.length > 1
          ? new cloudwatch.MathExpression({
              expression: served.map((_, i) => `q${i}`).join(' + '),
              usingMetrics: Object.fromEntries(served.map((q, i) => [`q${i}`, depth(q)])),
              period: Duration.minutes(1),
              label: 'waiting (every queue the workers poll)',
            })
          : depth(this.queue),
      scalingSteps: [
        { upper: 0, change: -1 },
        { lower: s.concurrency * 5, change: +1 },
        { lower: s.concurrency * 20, change: +2 },
        { lower: s.concurrency * 100, change: +4 },
      ],
      adjustmentType: appscaling.AdjustmentType.CHANGE_IN_CAPACITY,
      cooldown: Duration.seconds(120),
    });

    new CfnOutput(this, 'QueueUrl', { value: this.queue.queueUrl });
    if (this.spilloverQueue) new CfnOutput(this, 'SpilloverQueueUrl', { value: this.spilloverQueue.queueUrl });
    if (this.lanes) {
      new CfnOutput(this, 'HighQueueUrl', { value: this.lanes.high.queueUrl });
      new CfnOutput(this, 'LowQueueUrl', { value: this.lanes.low.queueUrl });
    }
    new CfnOutput(this, 'DeadLetterQueueUrl', { value: this.deadLetterQueue.queueUrl });
    if (this.jobTable) new CfnOutput(this, 'JobTableName', { value: this.jobTable.tableName });
  }

  #alarms(s: DeploySettings): void {
    const deadLetters = new cloudwatch.Alarm(this, 'DeadLettersAlarm', {
      alarmName: `${s.queueName}-dead-letters`,
      alarmDescription: `Messages in ${s.queueName}-dlq: jobs that failed for good or could not be read. Run \`sqs-jobs dlq list\`, fix the cause, then \`sqs-jobs dlq replay\`.`,
      metric: this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), statistic: 'Maximum' }),
      threshold: 0,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    const oldest = new cloudwatch.Alarm(this, 'OldestMessageAlarm', {
      alarmName: `${s.queueName}-oldest-message`,
      alarmDescription: `The oldest message in ${s.queueName} is older than ${s.oldestMessageSlaSeconds} s: jobs wait too long. Check WaitTime vs ProcessTime per job, task count against maxTasks, and failing handlers.`,
      metric: this.queue.metricApproximateAgeOfOldestMessage({ period: Duration.minutes(1), statistic: 'Maximum' }),
      threshold: s.oldestMessageSlaSeconds,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
    if (s.alarmEmail !== undefined) {
      const topic = new sns.Topic(this, 'AlarmTopic');
      topic.addSubscription(new subscriptions.EmailSubscription(s.alarmEmail));
      const subscribers = this.events.subscribers.map((sub) => sub.deadLettersAlarm);
      for (const alarm of [deadLetters, oldest, ...subscribers]) alarm.addAlarmAction(new cwActions.SnsAction(topic));
    }
  }

  #dashboard(s: DeploySettings): void {
    const depthOf = (q: sqs.Queue, label: string) =>
      q.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), statistic: 'Maximum', label });
    const perMinute = { period: Duration.minutes(1), statistic: 'Sum' };
    const perJob = (metric: string, stat: string) =>
      new cloudwatch.MathExpression({
        expression: `SEARCH('{"${s.metricsNamespace}",Job,Queue} MetricName="${metric}" Queue="${s.queueName}"', '${stat}', 60)`,
        label: `${metric} ${stat}`,
        period: Duration.minutes(1),
        usingMetrics: {},
      });
    new cloudwatch.Dashboard(this, 'Dashboard', {
      dashboardName: `${s.queueName}-jobs`,
      widgets: [
        [
          new cloudwatch.GraphWidget({
            title: 'Enqueued vs dequeued per minute',
            left: [
              this.queue.metricNumberOfMessagesSent({ ...perMinute, label: 'enqueued' }),
              this.queue.metricNumberOfMessagesDeleted({ ...perMinute, label: 'dequeued (deleted)' }),
            ],
            width: 12,
          }),
          new cloudwatch.GraphWidget({
            title: 'Queue depth',
            left: [
              this.queue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), statistic: 'Maximum', label: 'waiting' }),
              this.queue.metricApproximateNumberOfMessagesNotVisible({
                period: Duration.minutes(1),
                statistic: 'Maximum',
                label: 'in flight',
              }),
              this.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
                period: Duration.minutes(1),
                statistic: 'Maximum',
                label: 'dead letters',
              }),
            ],
            width: 12,
          }),
        ],
        [
          new cloudwatch.GraphWidget({
            title: 'Wait time per job (p50, p99)',
            left: [perJob('WaitTime', 'p50'), perJob('WaitTime', 'p99')],
            width: 12,
          }),
          new cloudwatch.GraphWidget({
            title: 'Process time per job (p50, p99)',
            left: [perJob('ProcessTime', 'p50'), perJob('ProcessTime', 'p99')],
            width: 12,
          }),
        ],
        [
          // SQS fair queues (tenant as MessageGroupId): how many tenants SQS sees as noisy, and how
          // long the quiet ones wait.
          new cloudwatch.GraphWidget({
            title: "SQS fair queues: noisy tenants, quiet tenants' oldest message",
            left: [
              this.queue.metric('ApproximateNumberOfNoisyGroups', {
                period: Duration.minutes(1),
                statistic: 'Maximum',
                label: 'noisy tenants',
              }),
            ],
            right: [
              this.queue.metric('ApproximateAgeOfOldestMessageInQuietGroups', {
                period: Duration.minutes(1),
                statistic: 'Maximum',
                label: 'oldest in quiet tenants (s)',
              }),
            ],
            width: 12,
          }),
          ...(this.spilloverQueue
            ? [
                new cloudwatch.GraphWidget({
                  title: 'Spillover queue depth',
                  left: [depthOf(this.spilloverQueue, 'spilled, waiting')],
                  width: 12,
                }),
              ]
            : []),
        ],
      ],
    });
  }

  /** A one-node ElastiCache memcached that only the workers can reach; returns host:port. */
  #memcached(vpc: ec2.IVpc, workers: ec2.SecurityGroup, nodeType: string): string {
    const securityGroup = new ec2.SecurityGroup(this, 'MemcachedSecurityGroup', {
      vpc,
      description: 'sqs-jobs dedupe lock',
      allowAllOutbound: false,
    });
    securityGroup.addIngressRule(workers, ec2.Port.tcp(11211), 'sqs-jobs workers');
    const subnets = new elasticache.CfnSubnetGroup(this, 'MemcachedSubnets', {
      description: 'sqs-jobs memcached',
      subnetIds: vpc.selectSubnets({ subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS }).subnetIds,
    });
    const cluster = new elasticache.CfnCacheCluster(this, 'Memcached', {
      engine: 'memcached',
      cacheNodeType: nodeType,
      numCacheNodes: 1,
      cacheSubnetGroupName: subnets.ref,
      vpcSecurityGroupIds: [securityGroup.securityGroupId],
    });
    return `${cluster.attrConfigurationEndpointAddress}:${cluster.attrConfigurationEndpointPort}`;
  }
}
