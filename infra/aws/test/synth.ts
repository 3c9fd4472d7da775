import { App } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import { type DeploySettings, resolveSettings } from '../lib/settings.js';
import { SqsJobsWorkerStack } from '../lib/worker-stack.js';

/** Synthesise offline: no credentials, no network, an image from a registry so nothing is staged. */
export function synth(overrides: Partial<DeploySettings> = {}): Template {
  const app = new App();
  const stack = new SqsJobsWorkerStack(app, 'Test', {
    settings: resolveSettings(overrides),
    image: ecs.ContainerImage.fromRegistry('example.invalid/sqs-jobs-worker:test'),
  });
  return Template.fromStack(stack);
}

export type Statement = { Action: string | string[]; Resource: unknown; Condition?: unknown; Sid?: string };

/** The statements of the worker task role's policies. */
export function taskRoleStatements(t: Template): Statement[] {
  const roles = t.findResources('AWS::IAM::Role', {
    Properties: {
      AssumeRolePolicyDocument: { Statement: [{ Principal: { Service: 'ecs-tasks.amazonaws.com' } }] },
      Description: Match.stringLikeRegexp('sqs-jobs worker'),
    },
  });
  const roleId = Object.keys(roles)[0]!;
  const policies = t.findResources('AWS::IAM::Policy');
  return Object.values(policies)
    .filter((p) => JSON.stringify(p.Properties.Roles).includes(roleId))
    .flatMap((p) => p.Properties.PolicyDocument.Statement as Statement[]);
}
