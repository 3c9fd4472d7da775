import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as elasticache from 'aws-cdk-lib/aws-elasticache';
import type { Construct } from 'constructs';

/**
 * A one-node ElastiCache memcached that only the workers reach (the memcached client has no ElastiCache
 * auto-discovery, and the lock fails open if the node is lost); returns its host:port and security group.
 */
export function addMemcached(
  scope: Construct,
  vpc: ec2.IVpc,
  workers: ec2.ISecurityGroup,
  nodeType: string,
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
    cacheNodeType: nodeType,
    numCacheNodes: 1,
    cacheSubnetGroupName: subnets.ref,
    vpcSecurityGroupIds: [securityGroup.securityGroupId],
  });
  return { endpoint: `${cluster.attrConfigurationEndpointAddress}:${cluster.attrConfigurationEndpointPort}`, securityGroup };
}
