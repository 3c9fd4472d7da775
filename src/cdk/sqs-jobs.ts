import { DUE_INDEX } from '../core/due-index.js';
import { listIndexesOf } from './job-list-indexes.js';
import { CfnOutput, Duration, RemovalPolicy } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import type * as ecs from 'aws-cdk-lib/aws-ecs';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { DLQ_RETENTION_SECONDS } from '../ops/queues.js';
import { addAlarms, type JobAlarms } from './alarms.js';
import { addDashboard } from './dashboard.js';
import { SubscriberQueues } from './event-queues.js';
import {
  PRODUCER_QUEUE_ACTIONS,
  PRODUCER_STORE_ACTIONS,
  LOCK_STORE_ACTIONS,
  WORKER_DLQ_ACTIONS,
  WORKER_QUEUE_ACTIONS,
  WORKER_STORE_ACTIONS,
  WORKER_TICK_ACTIONS,
} from './permissions.js';
import { type DeploySettings, type DeploySettingsInput, queueSpec, resolveSettings } from './settings.js';
import { addEventBridgeSchedules } from './eventbridge-schedules.js';
import type { DlqArchive } from './dlq-archive.js';
import { addFargateWorkers, type FargateWorkerProps } from './fargate-workers.js';
import { addLambdaWorkers, type LambdaWorkerProps } from './lambda-workers.js';

/**
 * The deployment settings (each has a default, see `DEFAULT_SETTINGS`), and where the jobs run: a
 * Fargate service from your worker image (`image`), or a Lambda function from your handler file
 * (`runtime: 'lambda'`, `entry`).
 */
export type SqsJobsProps = DeploySettingsInput & (FargateWorkerProps | LambdaWorkerProps);

/**
 * sqs-jobs on AWS in one construct: the job queue and its DLQ (with the spillover queue and the
 * priority tiers' lanes when asked), the job table, each event's topic and subscriber queues, the
 * workers: a Fargate service running `sqs-jobs worker` (stop timeout from its shutdown deadline,
 * scaled on the backlog) with a one-node memcached for the dedupe lock, or a Lambda function on
 * the queues' event source mappings (the lock on the job table); the alarms an operator needs
 * (`alarms.ts`) and a CloudWatch dashboard. The workers' role gets exactly the actions they use;
 * `grantEnqueue` gives a producer its own.
 */
export class SqsJobs extends Construct {
  /** The settings as resolved: the defaults with the given ones on top, checked. */
  readonly settings: DeploySettings;
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;
  /** With `spillover`: tenant fairness's spillover queue (a producer sends a tenant's excess there). */
  readonly spilloverQueue: sqs.Queue | undefined;
  /** With `tiers`: the high and low tiers' lanes (the queue is the normal tier's). */
  readonly lanes: { readonly high: sqs.Queue; readonly low: sqs.Queue } | undefined;
  /** With `events`: the events' topics, and each subscriber job's queue, DLQ and alarm. */
  readonly events: SubscriberQueues;
  /** With `jobStore`: the job status table (partition key `pk`, TTL on `expiresAt`). */
  readonly jobTable: dynamodb.Table | undefined;
  /** The role the jobs run under: the Fargate task's, or the Lambda function's. */
  readonly taskRole: iam.Role;
  /** The Fargate service (undefined with `runtime: 'lambda'`). */
  readonly service: ecs.FargateService | undefined;
  /** With `runtime: 'lambda'`: the function running the jobs, on an event source mapping per queue. */
  readonly function: lambda.IFunction | undefined;
  /** With `dlqArchive`: the bucket the dead letters go to, the task that moves them, its schedule. */
  readonly dlqArchive: DlqArchive | undefined;
  readonly alarms: JobAlarms;
  readonly dashboard: cloudwatch.Dashboard;
  /** memcached's `host:port`, `tls://host:port` with TLS (the one made here, or the `endpoint` given): producers that cancel jobs or use admission need it too. Empty on Lambda. */
  readonly memcachedEndpoint: string;
  /**
   * The security group of the memcached made here (undefined with an `endpoint`): only the workers
   * reach it; let a producer in with `memcachedSecurityGroup.addIngressRule(producerGroup, ec2.Port.tcp(11211))`.
   */
  readonly memcachedSecurityGroup: ec2.SecurityGroup | undefined;
  /** What a producer needs (send to the queues, record tracked jobs): attach it to a role, or call `grantEnqueue`. */
  readonly producerPolicy: iam.ManagedPolicy;
  /** The queues producers send to: the queue, its spillover queue and lanes. */
  readonly #sendable: sqs.Queue[];

  constructor(scope: Construct, id: string, props: SqsJobsProps) {
    super(scope, id);
    const { image, vpc, cluster, entry, handler, bundling, ...given } = props as DeploySettingsInput &
      Partial<FargateWorkerProps & LambdaWorkerProps>;
    const s = resolveSettings(given);
    if (s.runtime === 'lambda' && entry === undefined)
      throw new Error("invalid SqsJobs props: runtime 'lambda' needs entry, the handler's file");
    if (s.runtime === 'fargate' && image === undefined) throw new Error('invalid SqsJobs props: image is needed');
    this.settings = s;
    const spec = queueSpec(s);

    // Queues: the same attributes `sqs-jobs queues create` (and `npm run infra:local`) gives them.
    this.deadLetterQueue = new sqs.Queue(this, 'DeadLetterQueue', {
      queueName: `${spec.name}-dlq`,
      retentionPeriod: Duration.seconds(DLQ_RETENTION_SECONDS),
      // Its messages are the failures an operator still has to look at: kept when the stack goes.
      removalPolicy: RemovalPolicy.RETAIN,
    });
    // The spillover queue and the tiers' lanes mirror the queue: its settings and its DLQ.
    const jobQueue = (id: string, queueName: string) =>
      new sqs.Queue(this, id, {
        queueName,
        visibilityTimeout: Duration.seconds(spec.visibilityTimeout),
        retentionPeriod: Duration.seconds(spec.messageRetentionSeconds),
        deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: spec.maxReceiveCount },
      });
    this.queue = jobQueue('JobQueue', spec.name);
    this.spilloverQueue = s.spillover ? jobQueue('SpilloverQueue', `${spec.name}-spill`) : undefined;
    this.lanes = s.tiers ? { high: jobQueue('HighQueue', `${spec.name}-high`), low: jobQueue('LowQueue', `${spec.name}-low`) } : undefined;
    this.#sendable = [
      this.queue,
      ...(this.spilloverQueue ? [this.spilloverQueue] : []),
      ...(this.lanes ? [this.lanes.high, this.lanes.low] : []),
    ];
    // Subscriber jobs' queues, served by the same workers (the jobs module exports their jobs).
    this.events = new SubscriberQueues(this, 'Events', { events: s.events, queue: spec });
    const subscriberQueues = this.events.subscribers.map((sub) => sub.queue);
    const served = [...this.#sendable, ...subscriberQueues];
    this.jobTable = s.jobStore
      ? new dynamodb.Table(this, 'JobTable', {
          tableName: `${spec.name}-jobs`,
          partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
          billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
          timeToLiveAttribute: 'expiresAt',
          pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: s.jobStore.pointInTimeRecovery },
        })
      : undefined;
    // Where schedules and jobs kept until their time wait (core/due-index.ts), as `sqs-jobs store create` makes it.
    this.jobTable?.addGlobalSecondaryIndex({
      indexName: DUE_INDEX.name,
      partitionKey: { name: DUE_INDEX.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: DUE_INDEX.sortKey, type: dynamodb.AttributeType.NUMBER },
      projectionType: dynamodb.ProjectionType.ALL,
    });
    // The jobs list's, as `sqs-jobs store create` makes them (CloudFormation adds one per update).
    for (const index of listIndexesOf(s.jobStore)) this.jobTable?.addGlobalSecondaryIndex(index);

    this.alarms = addAlarms(
      this,
      s,
      this,
      this.events.subscribers.map((sub) => sub.deadLettersAlarm),
    );
    this.dashboard = addDashboard(this, s, this);
    addEventBridgeSchedules(this, s, { queue: this.queue, dlq: this.deadLetterQueue, tracked: this.jobTable !== undefined });
    this.taskRole = this.#workerRole(s, served);
    this.producerPolicy = new iam.ManagedPolicy(this, 'ProducerPolicy', {
      description: 'sqs-jobs producer: send jobs to the queue (and its spillover queue and lanes), record tracked jobs as waiting',
      statements: this.#producerStatements(),
    });

    const parts = { queue: this.queue, served, jobTableName: this.jobTable?.tableName, role: this.taskRole };
    const queues = { deadLetterQueue: this.deadLetterQueue, spilloverQueue: this.spilloverQueue, subscriberQueues, queueName: spec.name };
    const workers =
      s.runtime === 'lambda'
        ? addLambdaWorkers(this, s, { runtime: 'lambda', entry: entry!, handler, bundling }, parts)
        : addFargateWorkers(this, s, { image: image!, vpc, cluster }, { ...parts, ...queues });
    ({
      service: this.service,
      function: this.function,
      memcachedEndpoint: this.memcachedEndpoint,
      memcachedSecurityGroup: this.memcachedSecurityGroup,
      dlqArchive: this.dlqArchive,
    } = workers);

    new CfnOutput(this, 'QueueUrl', { value: this.queue.queueUrl });
    if (this.spilloverQueue) new CfnOutput(this, 'SpilloverQueueUrl', { value: this.spilloverQueue.queueUrl });
    if (this.lanes) {
      new CfnOutput(this, 'HighQueueUrl', { value: this.lanes.high.queueUrl });
      new CfnOutput(this, 'LowQueueUrl', { value: this.lanes.low.queueUrl });
    }
    new CfnOutput(this, 'DeadLetterQueueUrl', { value: this.deadLetterQueue.queueUrl });
    if (this.jobTable) new CfnOutput(this, 'JobTableName', { value: this.jobTable.tableName });
  }

  /**
   * Let `grantee` (a Lambda function, a task role, a user) enqueue these jobs: send to the queue,
   * its spillover queue and lanes, and record tracked jobs as waiting in the job table.
   */
  grantEnqueue(grantee: iam.IGrantable): iam.Grant {
    // No statement ids here: one role may be granted by several of these constructs.
    const [send, record] = this.#producerStatements(false);
    const grant = iam.Grant.addToPrincipal({ grantee, actions: send!.actions, resourceArns: send!.resources });
    return record === undefined
      ? grant
      : grant.combine(iam.Grant.addToPrincipal({ grantee, actions: record.actions, resourceArns: record.resources }));
  }

  #producerStatements(named = true): iam.PolicyStatement[] {
    const sid = (id: string) => (named ? { sid: id } : {});
    return [
      new iam.PolicyStatement({ ...sid('SendJobs'), actions: PRODUCER_QUEUE_ACTIONS, resources: this.#sendable.map((q) => q.queueArn) }),
      ...(this.jobTable
        ? [new iam.PolicyStatement({ ...sid('RecordWaiting'), actions: PRODUCER_STORE_ACTIONS, resources: [this.jobTable.tableArn] })]
        : []),
    ];
  }

  /** The worker's task role: exactly the actions `sqs-jobs worker` calls, on these resources only. */
  #workerRole(s: DeploySettings, served: readonly sqs.IQueue[]): iam.Role {
    const role = new iam.Role(this, 'WorkerTaskRole', {
      assumedBy: new iam.ServicePrincipal(s.runtime === 'lambda' ? 'lambda.amazonaws.com' : 'ecs-tasks.amazonaws.com'),
      description: 'sqs-jobs worker: consume the job queue, dead-letter to its DLQ, publish job metrics',
    });
    role.addToPolicy(
      new iam.PolicyStatement({ sid: 'ConsumeJobQueue', actions: WORKER_QUEUE_ACTIONS, resources: served.map((q) => q.queueArn) }),
    );
    const deadLetterQueues = [this.deadLetterQueue, ...this.events.subscribers.map((sub) => sub.deadLetterQueue)];
    role.addToPolicy(
      new iam.PolicyStatement({ sid: 'DeadLetter', actions: WORKER_DLQ_ACTIONS, resources: deadLetterQueues.map((q) => q.queueArn) }),
    );
    if (this.jobTable) {
      // On Lambda the dedupe lock is on the job table too (DynamoLock: it deletes a released key).
      const actions = s.runtime === 'lambda' ? [...WORKER_STORE_ACTIONS, ...LOCK_STORE_ACTIONS] : WORKER_STORE_ACTIONS;
      role.addToPolicy(new iam.PolicyStatement({ sid: 'JobStore', actions, resources: [this.jobTable.tableArn] }));
      if (s.jobStore !== false && s.jobStore.schedules) {
        // The tick: due schedules and kept jobs found on the due index, a kept job removed once sent.
        role.addToPolicy(
          new iam.PolicyStatement({
            sid: 'ScheduleTick',
            actions: WORKER_TICK_ACTIONS,
            resources: [this.jobTable.tableArn, `${this.jobTable.tableArn}/index/${DUE_INDEX.name}`],
          }),
        );
      }
    }
    if (s.metrics === 'cloudwatch' && s.runtime !== 'lambda') {
      // PutMetricData has no resource type; the condition pins it to the job metrics namespace.
      role.addToPolicy(
        new iam.PolicyStatement({
          sid: 'PublishJobMetrics',
          actions: ['cloudwatch:PutMetricData'],
          resources: ['*'],
          conditions: { StringEquals: { 'cloudwatch:namespace': s.metricsNamespace } },
        }),
      );
    }
    return role;
  }
}
