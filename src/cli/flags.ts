import { type Command, Option } from 'commander';

export const collect = (value: string, previous: string[] | undefined) => [...(previous ?? []), value];

/** --endpoint and --region, which every command takes. */
export function withAws(command: Command): Command {
  return command
    .option('--endpoint <url>', 'SQS endpoint (default: SQS_JOBS_ENDPOINT, AWS_ENDPOINT_URL_SQS or AWS_ENDPOINT_URL)')
    .option('--region <region>', 'AWS region (default: AWS_REGION, AWS_DEFAULT_REGION or us-east-1)');
}

/** --table, --dynamodb-endpoint and --region: where the job store is. */
export function withStore(command: Command): Command {
  return command
    .option('--table <name>', 'job store table (default: SQS_JOBS_JOB_TABLE)')
    .option('--dynamodb-endpoint <url>', 'DynamoDB endpoint (default: AWS_ENDPOINT_URL_DYNAMODB or AWS_ENDPOINT_URL)')
    .option('--region <region>', 'AWS region (default: AWS_REGION, AWS_DEFAULT_REGION or us-east-1)');
}

export const cloudwatchEndpoint = () =>
  new Option(
    '--cloudwatch-endpoint <url>',
    'CloudWatch endpoint (default: AWS_ENDPOINT_URL_CLOUDWATCH or AWS_ENDPOINT_URL; never the SQS one)',
  );

/** The filter every DLQ command takes: all given must match. */
export const filtered = (command: Command) =>
  command
    .option('--job <name>', 'only this job')
    .option('--id <id>', 'only this job id')
    .option('--reason <code>', 'only this reason (handler-failed, not-an-envelope, redrive, ...)')
    .option('--tenant <tenant>', 'only this tenant')
    .option('--error <text>', 'only those whose error contains this text (any case)')
    .option('--older-than <age>', "only those dead-lettered at least this long ago: seconds, or '12h', '10d'")
    .option('--newer-than <age>', "only those dead-lettered at most this long ago: seconds, or '30m', '2h'");
