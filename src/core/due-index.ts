/**
 * The job store table's due index, where schedules and jobs kept until their time wait: its name
 * and keys, one definition for the DynamoDB adapter (src/adapters/dynamodb-table.ts), which makes
 * it with `sqs-jobs store create`, and the CDK construct, which makes it with the table.
 * Partition: `schedShard` (a string: `s0`..`s3` schedules, `t0`..`t3` kept jobs); sort: `schedDue`
 * (a number: epoch seconds); every attribute projected.
 */
export const DUE_INDEX = { name: 'schedules-due', partitionKey: 'schedShard', sortKey: 'schedDue' } as const;
