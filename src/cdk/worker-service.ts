import { Duration } from 'aws-cdk-lib';
import * as appscaling from 'aws-cdk-lib/aws-applicationautoscaling';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as cr from 'aws-cdk-lib/custom-resources';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { acrossQueues, MINUTE } from './queue-metrics.js';
import { queueSpec, stopTimeoutSeconds, type DeploySettings } from './settings.js';

interface WorkerServiceParts {
  readonly image: ecs.ContainerImage;
  readonly cluster: ecs.ICluster;
  readonly securityGroup: ec2.ISecurityGroup;
  readonly taskRole: iam.IRole;
  readonly queue: sqs.IQueue;
  readonly spilloverQueue: sqs.IQueue | undefined;
  /** Subscriber jobs' queues: polled at the main queue's weight. */
  readonly subscriberQueues: readonly sqs.IQueue[];
  /** Every queue the workers poll: scaling counts what waits in all of them. */
  readonly served: readonly sqs.IQueue[];
  readonly memcached: string;
  readonly jobTableName: string | undefined;
  readonly region: string;
}

/** `sqs-jobs worker`'s arguments for these settings and queues. */
function workerCommand(s: DeploySettings, p: WorkerServiceParts): string[] {
  const spec = queueSpec(s);
  const mainWeight = p.spilloverQueue ? '@4' : '';
  return [
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
    ...(p.spilloverQueue || p.subscriberQueues.length > 0
      ? [
          '--queue',
          `${p.queue.queueUrl}${mainWeight}`,
          ...(p.spilloverQueue ? ['--queue', `${p.spilloverQueue.queueUrl}@1`] : []),
          ...p.subscriberQueues.flatMap((q) => ['--queue', `${q.queueUrl}${mainWeight}`]),
        ]
      : []),
    // With tiers it also polls the queue's -high and -low lanes.
    ...(s.tiers ? ['--tiers', s.tiers] : []),
    // Fires the schedules in the job table, and sends the jobs kept there until their time.
    ...(s.jobStore !== false && s.jobStore.schedules ? ['--schedules'] : []),
  ];
}

/** The Fargate service running `sqs-jobs worker`, stopped gracefully, scaled in steps on the backlog. */
export function addWorkerService(scope: Construct, s: DeploySettings, p: WorkerServiceParts): ecs.FargateService {
  const taskDefinition = new ecs.FargateTaskDefinition(scope, 'WorkerTask', {
    cpu: s.cpu,
    memoryLimitMiB: s.memoryMiB,
    taskRole: p.taskRole,
  });
  taskDefinition.addContainer('worker', {
    image: p.image,
    command: workerCommand(s, p),
    environment: {
      SQS_JOBS_QUEUE_URL: p.queue.queueUrl,
      SQS_JOBS_MEMCACHED: p.memcached,
      SQS_JOBS_METRICS: s.metrics,
      SQS_JOBS_METRICS_NAMESPACE: s.metricsNamespace,
      ...(p.jobTableName === undefined ? {} : { SQS_JOBS_JOB_TABLE: p.jobTableName }),
      AWS_REGION: p.region,
    },
    logging: ecs.LogDrivers.awsLogs({ streamPrefix: 'worker', logRetention: logs.RetentionDays.ONE_MONTH }),
    // SIGTERM → the worker's graceful stop; SIGKILL only after this.
    stopTimeout: Duration.seconds(stopTimeoutSeconds(s)),
    // A minimal init as PID 1 forwards signals and reaps children.
    linuxParameters: new ecs.LinuxParameters(scope, 'WorkerLinux', { initProcessEnabled: true }),
    readonlyRootFilesystem: true,
  });
  // The declared schedules are the workers' to fire, put at each deploy (EventBridge's are not put).
  if (s.jobStore !== false && s.jobStore.schedules && s.scheduler === 'workers') addScheduleSync(scope, s, p, taskDefinition);
  const service = new ecs.FargateService(scope, 'WorkerService', {
    cluster: p.cluster,
    taskDefinition,
    desiredCount: s.minTasks,
    securityGroups: [p.securityGroup],
    vpcSubnets: { subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS },
    minHealthyPercent: 100,
    maxHealthyPercent: 200,
    circuitBreaker: { rollback: true },
  });
  // Step scaling on the backlog: never below minTasks, more tasks the deeper the queues.
  const scaling = service.autoScaleTaskCount({ minCapacity: s.minTasks, maxCapacity: s.maxTasks });
  const depth = (q: sqs.IQueue) => q.metricApproximateNumberOfMessagesVisible({ period: MINUTE, statistic: 'Maximum' });
  scaling.scaleOnMetric('QueueDepthScaling', {
    metric: acrossQueues(p.served, depth, 'sum', 'waiting (every queue the workers poll)'),
    scalingSteps: [
      { upper: 0, change: -1 },
      { lower: s.concurrency * 5, change: +1 },
      { lower: s.concurrency * 20, change: +2 },
      { lower: s.concurrency * 100, change: +4 },
    ],
    adjustmentType: appscaling.AdjustmentType.CHANGE_IN_CAPACITY,
    cooldown: Duration.seconds(120),
  });
  return service;
}

/**
 * `sqs-jobs schedules sync` at each deploy, as the app `queueName`: a one-off task of the workers'
 * own task definition (their image, jobs module, role and network) with the command overridden,
 * started through ECS RunTask by a CloudFormation custom resource each time the task definition
 * changes. CloudFormation does not wait for it: what it changed (or why it failed) is in the
 * workers' log group, stream prefix `worker`, and a sync that failed changed nothing.
 */
function addScheduleSync(scope: Construct, s: DeploySettings, p: WorkerServiceParts, task: ecs.FargateTaskDefinition): void {
  const subnets = p.cluster.vpc.selectSubnets({ subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS }).subnetIds;
  const runTask: cr.AwsSdkCall = {
    service: 'ECS',
    action: 'runTask',
    parameters: {
      cluster: p.cluster.clusterArn,
      taskDefinition: task.taskDefinitionArn,
      launchType: 'FARGATE',
      startedBy: 'sqs-jobs-schedule-sync',
      networkConfiguration: {
        awsvpcConfiguration: { subnets, securityGroups: [p.securityGroup.securityGroupId], assignPublicIp: 'DISABLED' },
      },
      overrides: {
        containerOverrides: [
          // --allow-empty: a module that no longer declares any removes the app's (the workers load the same module).
          { name: 'worker', command: ['schedules', 'sync', '--jobs', s.jobsModule, '--app', s.queueName, '--allow-empty'] },
        ],
      },
    },
    // A new one each deploy that changes the task definition (image, module, settings). Only the
    // task's ARN comes back: a custom resource's answer holds 4 KB, and RunTask's is larger. A task
    // RunTask could not start (its `failures`) has none, and fails the deploy.
    physicalResourceId: cr.PhysicalResourceId.fromResponse('tasks.0.taskArn'),
    outputPaths: ['tasks.0.taskArn'],
  };
  const roles = [task.taskRole.roleArn, ...(task.executionRole === undefined ? [] : [task.executionRole.roleArn])];
  const sync = new cr.AwsCustomResource(scope, 'ScheduleSync', {
    onCreate: runTask,
    onUpdate: runTask,
    installLatestAwsSdk: false,
    policy: cr.AwsCustomResourcePolicy.fromStatements([
      new iam.PolicyStatement({ actions: ['ecs:RunTask'], resources: [task.taskDefinitionArn] }),
      new iam.PolicyStatement({ actions: ['iam:PassRole'], resources: roles }),
    ]),
  });
  // Started once the workers' role has its grants (its policies are added to the role later).
  sync.node.addDependency(task.taskRole);
}
