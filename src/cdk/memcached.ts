import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as elasticache from 'aws-cdk-lib/aws-elasticache';
import type { Construct } from 'constructs';

/**
 * A one-node ElastiCache memcached that only the workers reach (the memcached client has no ElastiCache
 * auto-discovery, and the lock fails open if the node is lost); returns its host:port and security group.
 * With `transitEncryption` the node speaks only TLS (ElastiCache allows it from memcached 1.6.12, in a
 * VPC, chosen when the cluster is created; with no engine version given ElastiCache picks its
 * newest) and the endpoint is `tls://host:port`.
 */
export function addMemcached(
  scope: Construct,
  vpc: ec2.IVpc,
  workers: ec2.ISecurityGroup,
  settings: { readonly nodeType: string; readonly transitEncryption?: boolean | undefined },
): { endpoint: string; securityGroup: ec2.SecurityGroup } {
  const securityGroup = new ec2.SecurityGroup(scope, 'MemcachedSecurityGroup', {
    vpc,
    description: 'sqs-jobs dedupe lock',
    allowAllOutbound: false,
  });
  securityGroup.addIngressRule(workers, ec2.Port.tcp(11211), 'sqs-jobs workers');
  const subnets = new elasticache.CfnSubnetGroup(scope, 'MemcachedSubnets', {
    description: 'sqs-jobs memcached',
    subnetIds: vpc.selectSubnets({ subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS }).subnetIds,
  });
  const cluster = new elasticache.CfnCacheCluster(scope, 'Memcached', {
    engine: 'memcached',
    cacheNodeType: settings.nodeType,
    numCacheNodes: 1,
    cacheSubnetGroupName: subnets.ref,
    vpcSecurityGroupIds: [securityGroup.securityGroupId],
    // Left out when off, so a stack made before the setting keeps its template (and its node).
    ...(settings.transitEncryption ? { transitEncryptionEnabled: true } : {}),
  });
  const endpoint = `${cluster.attrConfigurationEndpointAddress}:${cluster.attrConfigurationEndpointPort}`;
  return { endpoint: settings.transitEncryption ? `tls://${endpoint}` : endpoint, securityGroup };
}
