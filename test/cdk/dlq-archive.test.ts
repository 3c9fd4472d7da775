import { Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { resolveSettings } from '../../src/cdk/settings.js';
import { hasOutput, synth } from './synth.js';

// `dlqArchive`: `sqs-jobs dlq archive` run on a schedule by EventBridge Scheduler, as a Fargate task
// of its own (the workers' image, a role that may only read and delete the DLQ and write the bucket).
describe('dlqArchive', () => {
  it('makes a private, versioned bucket with the lifecycle given, a task that archives to it, and a daily schedule that runs it', () => {
    const t = synth({ dlqArchive: { olderThanDays: 10, lifecycle: { glacierAfterDays: 30, expireAfterDays: 400 } } });
    t.hasResourceProperties('AWS::S3::Bucket', {
      VersioningConfiguration: { Status: 'Enabled' },
      PublicAccessBlockConfiguration: Match.objectLike({ BlockPublicAcls: true, RestrictPublicBuckets: true }),
      LifecycleConfiguration: {
        Rules: [
          Match.objectLike({ Status: 'Enabled', ExpirationInDays: 400, Transitions: [{ StorageClass: 'GLACIER', TransitionInDays: 30 }] }),
        ],
      },
    });
    const tasks = Object.values(t.findResources('AWS::ECS::TaskDefinition')).map((r) => JSON.stringify(r.Properties));
    const archive = tasks.find((task) => task.includes('"archive"'))!;
    expect(archive).toMatch(/"Command":\["dlq","archive","--queue",.*"--older-than","10d","--to",\{"Fn::Join":\["",\["s3:\/\/",/);
    expect(archive).toContain('"/jobs/"');
    t.hasResourceProperties('AWS::Scheduler::Schedule', {
      ScheduleExpression: 'rate(1 day)',
      Target: Match.objectLike({
        EcsParameters: Match.objectLike({ LaunchType: 'FARGATE', TaskCount: 1 }),
        RetryPolicy: { MaximumEventAgeInSeconds: 3600, MaximumRetryAttempts: 5 },
      }),
    });
    hasOutput(t, 'DlqArchiveBucketName');
    // The archive's own role: the DLQ read and deleted, the bucket written under the prefix; nothing of the workers'.
    const policies = JSON.stringify(
      Object.entries(t.findResources('AWS::IAM::Policy')).filter(
        ([id]) => id.startsWith('DlqArchiveTaskRole') || id.includes('DlqArchiveTaskRole'),
      ),
    );
    expect(policies).toContain('sqs:DeleteMessage');
    expect(policies).toContain('s3:PutObject');
    expect(policies).not.toContain('dynamodb:');
    expect(policies).not.toContain('cloudwatch:PutMetricData');
  });

  it('uses an existing bucket and KMS key as given, and nothing when off', () => {
    const key = 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';
    const t = synth({
      dlqArchive: { olderThanDays: 7, bucket: 'acme-dead-letters', prefix: 'orders/', kmsKeyArn: key, schedule: 'cron(0 3 * * ? *)' },
    });
    expect(Object.keys(t.findResources('AWS::S3::Bucket'))).toHaveLength(0);
    const archive = Object.values(t.findResources('AWS::ECS::TaskDefinition'))
      .map((r) => JSON.stringify(r.Properties))
      .find((x) => x.includes('"archive"'))!;
    expect(archive).toContain('"--kms-key","arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"');
    expect(archive).toContain('s3://acme-dead-letters/orders/');
    t.hasResourceProperties('AWS::Scheduler::Schedule', { ScheduleExpression: 'cron(0 3 * * ? *)' });
    expect(JSON.stringify(t.findResources('AWS::IAM::Policy'))).toContain('kms:GenerateDataKey');
    expect(Object.keys(synth().findResources('AWS::Scheduler::Schedule'))).toHaveLength(0);
  });

  it('refuses what cannot keep its promise, naming the setting', () => {
    expect(() => resolveSettings({ dlqArchive: { olderThanDays: 14 } })).toThrow(
      /dlqArchive\.olderThanDays: must be <= 13: the DLQ deletes a message after 14 days/,
    );
    expect(() => resolveSettings({ dlqArchive: { olderThanDays: 3, bucket: 'b-x', lifecycle: { expireAfterDays: 9 } } })).toThrow(
      /dlqArchive\.lifecycle: is the new bucket's/,
    );
    expect(() => resolveSettings({ dlqArchive: { olderThanDays: 3, lifecycle: { glacierAfterDays: 90, expireAfterDays: 30 } } })).toThrow(
      /dlqArchive\.lifecycle\.expireAfterDays: must be after glacierAfterDays/,
    );
    expect(() => resolveSettings({ dlqArchive: { olderThanDays: 3, schedule: 'every day' } })).toThrow(
      /dlqArchive\.schedule: must be an EventBridge Scheduler/,
    );
  });
});
