import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { CfnSchedule } from 'aws-cdk-lib/aws-scheduler';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { z } from 'zod';

/** The DLQ keeps a message 14 days (DLQ_RETENTION_SECONDS): an archive must take it before then, with a day to spare. */
const MAX_OLDER_THAN_DAYS = 13;

/**
 * `dlqArchive`: archive dead letters to S3 before the DLQ's 14 days end (`sqs-jobs dlq archive`),
 * run by EventBridge Scheduler as a one-off Fargate task, daily by default.
 */
export const dlqArchiveSchema = z
  .object({
    /** An existing bucket's name; default: a new one (versioned, encrypted, private, kept when the stack goes). */
    bucket: z
      .string()
      .regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, 'must be an S3 bucket name')
      .optional(),
    /** The key prefix the dead letters go under; default `<queueName>/`. */
    prefix: z
      .string()
      .regex(/^[^\s]{0,200}$/, 'must be at most 200 characters without spaces')
      .optional(),
    /** Archive those first sent to the DLQ at least this many days ago (1-13: the DLQ keeps them 14 days). */
    olderThanDays: z
      .number()
      .int('must be a whole number of days')
      .min(1, 'must be >= 1')
      .max(MAX_OLDER_THAN_DAYS, `must be <= ${MAX_OLDER_THAN_DAYS}: the DLQ deletes a message after 14 days`),
    /** How often it runs: an EventBridge Scheduler rate or cron expression (default `rate(1 day)`). */
    schedule: z
      .string()
      .regex(/^(rate|cron)\(.+\)$/, 'must be an EventBridge Scheduler rate(...) or cron(...) expression')
      .default('rate(1 day)'),
    /** A KMS key (ARN) to encrypt the archived objects with (SSE-KMS); default: the bucket's own encryption. */
    kmsKeyArn: z
      .string()
      .regex(/^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key\/[A-Za-z0-9-]+$/, 'must be a KMS key ARN')
      .optional(),
    /** The new bucket's lifecycle: to Glacier Flexible Retrieval after `glacierAfterDays`, deleted after `expireAfterDays`. */
    lifecycle: z
      .object({ glacierAfterDays: z.number().int().min(1).optional(), expireAfterDays: z.number().int().min(1).optional() })
      .strict()
      .default({}),
  })
  .strict()
  .superRefine((a, ctx) => {
    const { glacierAfterDays: g, expireAfterDays: e } = a.lifecycle;
    if (g !== undefined && e !== undefined && e <= g)
      ctx.addIssue({ code: 'custom', path: ['lifecycle', 'expireAfterDays'], message: 'must be after glacierAfterDays' });
    if (a.bucket !== undefined && (g !== undefined || e !== undefined))
      ctx.addIssue({ code: 'custom', path: ['lifecycle'], message: "is the new bucket's: set an existing bucket's lifecycle on it" });
  });

/** What the archive needs of the stack. */
interface ArchiveParts {
  readonly image: ecs.ContainerImage;
  readonly cluster: ecs.ICluster;
  readonly securityGroup: ec2.ISecurityGroup;
  readonly queue: sqs.IQueue;
  readonly deadLetterQueue: sqs.IQueue;
  readonly queueName: string;
  readonly region: string;
}

/** What `dlqArchive` made: the bucket, the task that archives, and its schedule. */
export interface DlqArchive {
  readonly bucket: s3.IBucket;
  readonly taskDefinition: ecs.FargateTaskDefinition;
  readonly schedule: CfnSchedule;
}

/**
 * The archive: a bucket (or the one named), a Fargate task definition of its own (the workers'
 * image, a role that may only read and delete the DLQ and write under the prefix), and an
 * EventBridge Scheduler schedule that runs it. The task writes each dead letter, then deletes it
 * (a run that dies between leaves a copy in both: `dlq replay` runs such a job once).
 */
export function addDlqArchive(scope: Construct, settings: z.output<typeof dlqArchiveSchema>, p: ArchiveParts): DlqArchive {
  const prefix = settings.prefix ?? `${p.queueName}/`;
  const bucket =
    settings.bucket === undefined ? newBucket(scope, settings) : s3.Bucket.fromBucketName(scope, 'DlqArchiveBucket', settings.bucket);
  const role = new iam.Role(scope, 'DlqArchiveTaskRole', {
    assumedBy: new iam.ServicePrincipal('ecs-tasks.amazonaws.com'),
    description: 'sqs-jobs dlq archive: read and delete dead letters, write them to S3 first',
  });
  p.deadLetterQueue.grantConsumeMessages(role);
  role.addToPolicy(
    new iam.PolicyStatement({ actions: ['sqs:GetQueueAttributes'], resources: [p.queue.queueArn, p.deadLetterQueue.queueArn] }),
  );
  bucket.grantPut(role, `${prefix}*`);
  bucket.grantRead(role, `${prefix}*`);
  if (settings.kmsKeyArn !== undefined)
    role.addToPolicy(new iam.PolicyStatement({ actions: ['kms:GenerateDataKey', 'kms:Decrypt'], resources: [settings.kmsKeyArn] }));
  const task = new ecs.FargateTaskDefinition(scope, 'DlqArchiveTask', { cpu: 256, memoryLimitMiB: 512, taskRole: role });
  task.addContainer('archive', {
    image: p.image,
    command: [
      'dlq',
      'archive',
      '--queue',
      p.queue.queueUrl,
      '--older-than',
      `${settings.olderThanDays}d`,
      '--to',
      `s3://${bucket.bucketName}/${prefix}`,
      ...(settings.kmsKeyArn === undefined ? [] : ['--kms-key', settings.kmsKeyArn]),
    ],
    environment: { AWS_REGION: p.region },
    logging: ecs.LogDrivers.awsLogs({ streamPrefix: 'dlq-archive', logRetention: logs.RetentionDays.ONE_YEAR }),
    readonlyRootFilesystem: true,
  });
  const schedulerRole = new iam.Role(scope, 'DlqArchiveSchedulerRole', {
    assumedBy: new iam.ServicePrincipal('scheduler.amazonaws.com'),
    description: 'sqs-jobs: EventBridge Scheduler starts the DLQ archive task',
  });
  schedulerRole.addToPolicy(new iam.PolicyStatement({ actions: ['ecs:RunTask'], resources: [task.taskDefinitionArn] }));
  const passed = [role.roleArn, ...(task.executionRole === undefined ? [] : [task.executionRole.roleArn])];
  schedulerRole.addToPolicy(new iam.PolicyStatement({ actions: ['iam:PassRole'], resources: passed }));
  const subnets = p.cluster.vpc.selectSubnets({ subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS }).subnetIds;
  const schedule = new CfnSchedule(scope, 'DlqArchiveSchedule', {
    description: `sqs-jobs: archive ${p.queueName}'s dead letters older than ${settings.olderThanDays} days to S3`,
    scheduleExpression: settings.schedule,
    flexibleTimeWindow: { mode: 'FLEXIBLE', maximumWindowInMinutes: 15 },
    state: 'ENABLED',
    target: {
      arn: p.cluster.clusterArn,
      roleArn: schedulerRole.roleArn,
      ecsParameters: {
        taskDefinitionArn: task.taskDefinitionArn,
        launchType: 'FARGATE',
        taskCount: 1,
        networkConfiguration: {
          awsvpcConfiguration: { subnets, securityGroups: [p.securityGroup.securityGroupId], assignPublicIp: 'DISABLED' },
        },
      },
      // A run missed for an hour is tried again; the next day's run would take what it left anyway.
      retryPolicy: { maximumEventAgeInSeconds: 3_600, maximumRetryAttempts: 5 },
    },
  });
  return { bucket, taskDefinition: task, schedule };
}

/** The archive's own bucket: private, TLS only, versioned (a dead letter overwritten stays), kept when the stack goes. */
function newBucket(scope: Construct, settings: z.output<typeof dlqArchiveSchema>): s3.Bucket {
  const { glacierAfterDays, expireAfterDays } = settings.lifecycle;
  return new s3.Bucket(scope, 'DlqArchiveBucket', {
    blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
    enforceSSL: true,
    versioned: true,
    encryption: s3.BucketEncryption.S3_MANAGED,
    removalPolicy: RemovalPolicy.RETAIN,
    lifecycleRules:
      glacierAfterDays === undefined && expireAfterDays === undefined
        ? []
        : [
            {
              id: 'dead-letters',
              ...(glacierAfterDays === undefined
                ? {}
                : { transitions: [{ storageClass: s3.StorageClass.GLACIER, transitionAfter: Duration.days(glacierAfterDays) }] }),
              ...(expireAfterDays === undefined ? {} : { expiration: Duration.days(expireAfterDays) }),
              noncurrentVersionExpiration: Duration.days(expireAfterDays ?? 30),
            },
          ],
  });
}
