import { CfnOutput, Stack } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { addDlqArchive, type DlqArchive } from './dlq-archive.js';
import { addMemcached } from './memcached.js';
import type { DeploySettings } from './settings.js';
import { addWorkerService } from './worker-service.js';

/** What the Fargate workers are given of the construct. */
export interface FargateWorkerProps {
  /**
   * The worker image: your app, with sqs-jobs installed and `jobsModule` built into it; its
   * entrypoint is the `sqs-jobs` CLI (the command is `worker --jobs <jobsModule> ...`). E.g.
   * `ecs.ContainerImage.fromAsset('.')` with a Dockerfile whose ENTRYPOINT is
   * `["node", "node_modules/sqs-jobs/dist/src/cli/main.js"]` (the root filesystem is read-only: no npx).
   */
  readonly image: ecs.ContainerImage;
  /** An existing VPC; default: a new one with two AZs and one NAT gateway. Ignored when `cluster` is given. */
  readonly vpc?: ec2.IVpc;
  /** An existing ECS cluster to run the workers in; default: a new one in `vpc`. */
  readonly cluster?: ecs.ICluster;
}

interface FargateParts {
  readonly role: iam.IRole;
  readonly queue: sqs.IQueue;
  readonly deadLetterQueue: sqs.IQueue;
  readonly spilloverQueue: sqs.IQueue | undefined;
  readonly subscriberQueues: readonly sqs.IQueue[];
  readonly served: readonly sqs.IQueue[];
  readonly jobTableName: string | undefined;
  readonly queueName: string;
}

/** The Fargate side: the cluster (or the one given), memcached, the worker service, and the DLQ archive's task. */
export function addFargateWorkers(scope: Construct, s: DeploySettings, props: FargateWorkerProps, p: FargateParts) {
  const { image } = props;
  const cluster =
    props.cluster ?? new ecs.Cluster(scope, 'Cluster', { vpc: props.vpc ?? new ec2.Vpc(scope, 'Vpc', { maxAzs: 2, natGateways: 1 }) });
  const securityGroup = new ec2.SecurityGroup(scope, 'WorkerSecurityGroup', { vpc: cluster.vpc, description: 'sqs-jobs workers' });
  const made = 'endpoint' in s.memcached ? undefined : addMemcached(scope, cluster.vpc, securityGroup, s.memcached);
  const memcachedEndpoint = made?.endpoint ?? ('endpoint' in s.memcached ? s.memcached.endpoint : '');
  const region = Stack.of(scope).region;
  const service = addWorkerService(scope, s, {
    image,
    cluster,
    securityGroup,
    taskRole: p.role,
    queue: p.queue,
    spilloverQueue: p.spilloverQueue,
    subscriberQueues: p.subscriberQueues,
    served: p.served,
    memcached: memcachedEndpoint,
    jobTableName: p.jobTableName,
    region,
  });
  const archive = { image, cluster, securityGroup, queue: p.queue, deadLetterQueue: p.deadLetterQueue, queueName: p.queueName };
  const dlqArchive: DlqArchive | undefined =
    s.dlqArchive === false ? undefined : addDlqArchive(scope, s.dlqArchive, { ...archive, region });
  if (dlqArchive) new CfnOutput(scope, 'DlqArchiveBucketName', { value: dlqArchive.bucket.bucketName });
  return { service, function: undefined, memcachedEndpoint, memcachedSecurityGroup: made?.securityGroup, dlqArchive };
}
