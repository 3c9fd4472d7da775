import { App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import { SqsJobs, type SqsJobsProps } from '../../src/cdk/index.js';
import type { DeploySettingsInput } from '../../src/cdk/settings.js';

/** Synthesise offline: no credentials, no network, an image from a registry so nothing is staged. */
export function synth(settings: DeploySettingsInput = {}, more: Partial<SqsJobsProps> = {}): Template {
  return Template.fromStack(stackWith(settings, more).stack);
}

/** The construct in a stack of its own, for a test that needs it (`grantEnqueue`). */
export function stackWith(settings: DeploySettingsInput = {}, more: Partial<SqsJobsProps> = {}): { stack: Stack; jobs: SqsJobs } {
  const stack = new Stack(new App(), 'Test');
  const jobs = new SqsJobs(stack, 'Jobs', {
    image: ecs.ContainerImage.fromRegistry('example.invalid/sqs-jobs-worker:test'),
    ...settings,
    ...more,
  });
  return { stack, jobs };
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

/** The template has a stack output whose logical id is the construct's `name` output (`JobsQueueUrl…`). */
export function hasOutput(t: Template, name: string): void {
  const ids = Object.keys(t.findOutputs('*'));
  if (!ids.some((id) => id.startsWith(`Jobs${name}`))) throw new Error(`no output ${name} among ${ids.join(', ')}`);
}
